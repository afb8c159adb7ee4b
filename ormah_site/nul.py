"""Refuse NUL characters at the door: in the path, the query string, a form, or anywhere in a JSON body.

No memory field may hold a NUL (memory.domain.requests), PostgreSQL's text and jsonb cannot store one, and a
NUL in a query parameter that reached the database answered 500 there. One check here instead of one per route:
an API request with a valid token gets the API's error shape (400 for the URL, 422 for a body); an API request
without one goes on to the route, which answers 401 before reading anything; a web page gets a plain 400.
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest

from ormah_site.api_errors import API_PREFIX

FORMS = ("application/x-www-form-urlencoded", "multipart/form-data")


def holds_nul(value: Any) -> bool:
    """A NUL in a string, or in any key or string of parsed JSON."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(holds_nul(k) or holds_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(holds_nul(v) for v in value)
    return False


def _in_url(request: HttpRequest) -> bool:
    return "\x00" in request.path or any(holds_nul(k) or any("\x00" in v for v in vs)
                                         for k, vs in request.GET.lists())


def _in_body(request: HttpRequest) -> bool:
    if request.method not in ("POST", "PUT", "PATCH"):
        return False
    kind = request.content_type or ""
    try:
        if kind in FORMS:
            return any(holds_nul(k) or any(isinstance(v, str) and "\x00" in v for v in vs)
                       for k, vs in request.POST.lists())
        if kind.endswith("json") and request.body:
            return holds_nul(json.loads(request.body))
    except (RequestDataTooBig, TooManyFieldsSent, ValueError, RecursionError):
        return False  # too large or not JSON: the view answers with its own 4xx (413, 400, 422)
    return False


def _api_refusal(status: int, code: str, where: str) -> HttpResponse:
    body = {"error": code, "message": f"NUL characters are not accepted in {where}", "details": None}
    return HttpResponse(json.dumps(body), status=status, content_type="application/json")


class RefuseNul:
    """Middleware: a request carrying a NUL character never reaches a view."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        in_url = _in_url(request)
        in_body = not in_url and _in_body(request)
        if not (in_url or in_body):
            return self.get_response(request)
        if request.path.startswith(API_PREFIX):
            from ormah_site.api import BearerToken

            if BearerToken()(request) is None:
                return self.get_response(request)  # 401 from the route, which tells nothing more
            return _api_refusal(400, "bad_request", "the URL") if in_url else \
                _api_refusal(422, "validation_failed", "the request body")
        return HttpResponseBadRequest("NUL characters are not accepted.", content_type="text/plain")
