"""Template context every page gets: the inbox counter of the top bar (queried only when a page shows it)."""

from __future__ import annotations

from django.http import HttpRequest

from maintenance.selectors import proposal_status_counts


def _pending() -> int:
    return proposal_status_counts().get("pending", 0)


def nav(request: HttpRequest) -> dict:
    """`inbox_pending`: a callable, so partials that never show the counter never query it."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    return {"inbox_pending": _pending}
