"""The small request and response helpers every screen shares (one copy of each)."""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse


def is_htmx(request: HttpRequest) -> bool:
    """True for requests htmx makes (they get partials instead of pages)."""
    return request.headers.get("HX-Request") == "true"


def with_events(response: HttpResponse, events: dict[str, dict]) -> HttpResponse:
    """Tell the page (graph.js, the inbox) what changed, through htmx's HX-Trigger response header."""
    if events:
        response["HX-Trigger"] = json.dumps(events)
    return response


def with_trigger(response: HttpResponse, event: str, detail: dict) -> HttpResponse:
    """with_events for a single event."""
    return with_events(response, {event: detail})
