"""The review inbox, the home of curation: decisions waiting (one card per proposal or group), what was learned
or changed since a time, decided proposals; decisions and undo answer with the card and out-of-band counters.
"""

from __future__ import annotations

from urllib.parse import urlparse

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from maintenance.selectors import proposal_status_counts
from memory.domain.node import utcnow
from ormah_site.ui import undo
from ormah_site.ui.decisions import decide
from ormah_site.ui.http import is_htmx, with_events
from ormah_site.ui.view_models.inbox import (
    SINCE_CHOICES,
    cards_for,
    changes_page,
    decisions_page,
    since_from,
)
from ormah_site.ui.view_models.review import merge_history

VIEWS = ("decide", "changes", "decided")
DECIDED = ("approved", "rejected", "expired")


def _int(value: str | None, default: int = 1) -> int:
    return int(value) if value and value.isdigit() else default


@login_required
@require_GET
def inbox_page(request: HttpRequest) -> HttpResponse:
    """The inbox: ?view=decide (default), changes (?since=1d|7d|30d|YYYY-MM-DD) or decided (?status=...)."""
    view = request.GET.get("view", "decide")
    view = view if view in VIEWS else "decide"
    since = since_from(request.GET.get("since"), now=utcnow())
    number = _int(request.GET.get("page"))
    context = {"view": view, "since": since, "since_choices": [(c, label) for c, label, _ in SINCE_CHOICES],
               "can_undo": undo.latest(request) is not None}
    if view == "changes":
        context["changes"] = changes_page(since=since, number=number)
        context["counts"] = {s: n for s, n in proposal_status_counts().items()}
        context["changes_total"] = context["changes"].activity.total
    else:
        status = "pending" if view == "decide" else request.GET.get("status", "approved")
        status = status if status == "pending" or status in DECIDED else "approved"
        decisions = decisions_page(status=status, number=number)
        context.update(decisions=decisions, counts=decisions.counts, status=status,
                       decided_tabs=[(s, decisions.counts.get(s, 0)) for s in DECIDED],
                       merges=merge_history() if view == "decided" else [])
        context["changes_total"] = changes_page(since=since, number=1, size=1).activity.total
    return render(request, "inbox/page.html", context)


def _answer(request: HttpRequest, template: str, context: dict, *, status: int = 200) -> HttpResponse:
    """A partial plus the out-of-band counters and message every decision and undo updates in place."""
    counts = proposal_status_counts()
    page = urlparse(request.headers.get("HX-Current-URL", "")).path
    context = {**context, "pending": counts.get("pending", 0), "counts": counts,
               "can_undo": undo.latest(request) is not None, "on_inbox": page == reverse("ui:inbox")}
    return render(request, template, context, status=status)


def _tell(request: HttpRequest, message: str, errors: list[str]) -> None:
    """The message of a decision or an undo, for the page a plain form post is redirected to."""
    if message:
        messages.info(request, message)
    for error in errors:
        messages.error(request, error)


@login_required
@require_POST
def inbox_decide(request: HttpRequest) -> HttpResponse:
    """Approve or reject the proposals of one card (a group card sends all of its ids); answers with the card."""
    ids = request.POST.getlist("ids")
    action = request.POST.get("action", "")
    outcome = decide(request, ids=ids, action=action)
    if not is_htmx(request):  # a form posted without JavaScript: the inbox says what happened
        _tell(request, outcome.message, outcome.errors)
        return redirect(reverse("ui:inbox"))
    cards = cards_for(ids=ids)
    response = _answer(request, "inbox/_decided.html", {
        "c": cards[0] if cards else None, "card_key": request.POST.get("card", ""), "outcome": outcome,
        "message": outcome.message, "errors": outcome.errors, "undo_token": outcome.undo_token,
    }, status=200 if outcome.done or not outcome.errors else 409)
    return with_events(response, outcome.events)


@login_required
@require_POST
def undo_view(request: HttpRequest) -> HttpResponse:
    """Undo the newest action (or the one whose token is posted); answers with the message and the counters."""
    outcome = undo.undo(request, entry_id=request.POST.get("token") or None)
    if outcome is None:
        message, errors, events = "Nothing to undo.", [], {}
    else:
        message = f"Undone: {outcome.label}." if outcome.ok else f"Partly undone: {outcome.label}."
        errors = outcome.errors
        events = {"ormah:undone": {"reopened": outcome.reopened}}
        if outcome.changed:
            events["ormah:changed"] = {"ids": list(dict.fromkeys(outcome.changed))}
        if outcome.removed:
            events["ormah:removed"] = {"ids": outcome.removed}
    if not is_htmx(request):
        _tell(request, message, errors)
        back = request.POST.get("next", "")
        safe = url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure())
        return redirect(back if back and safe else reverse("ui:inbox"))
    response = _answer(request, "inbox/_toast.html", {"message": message, "errors": errors},
                       status=200 if not errors else 409)
    return with_events(response, events)


@login_required
@require_GET
def proposals_redirect(request: HttpRequest) -> HttpResponse:
    """The old proposals page is the inbox now (decided proposals under ?view=decided)."""
    status = request.GET.get("status", "pending")
    if status in DECIDED:
        return redirect(f"{reverse('ui:inbox')}?view=decided&status={status}")
    return redirect(reverse("ui:inbox"))
