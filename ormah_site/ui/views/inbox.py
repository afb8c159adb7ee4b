"""The review inbox, the home of curation: decisions waiting (one card per proposal or group), what was learned
or changed since a time, decided proposals; decisions and undo answer with the card and out-of-band counters.
"""

from __future__ import annotations

import json
from urllib.parse import urlparse

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from pydantic import ValidationError

from maintenance.errors import ProposalChanged
from maintenance.selectors import proposal_result, proposal_status_counts
from memory.domain.node import utcnow
from memory.errors import OrmahError
from ormah_site.ui import undo
from ormah_site.ui.decisions import Decided, decide, decide_edited
from ormah_site.ui.forms import ProposalEditForm
from ormah_site.ui.http import is_htmx, with_events
from ormah_site.ui.view_models.inbox import (
    SINCE_CHOICES,
    InboxCard,
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
    return _decided(request, outcome, ids=ids, card_key=request.POST.get("card", ""))


def _decided(request: HttpRequest, outcome: Decided, *, ids: list[str], card_key: str) -> HttpResponse:
    """The answer to a decision: the card decided, the counters and the message (a plain post: the inbox)."""
    if not is_htmx(request):  # a form posted without JavaScript: the inbox says what happened
        _tell(request, outcome.message, outcome.errors)
        return redirect(reverse("ui:inbox"))
    cards = cards_for(ids=ids)
    response = _answer(request, "inbox/_decided.html", {
        "c": cards[0] if cards else None, "card_key": card_key, "outcome": outcome,
        "message": outcome.message, "errors": outcome.errors, "undo_token": outcome.undo_token,
    }, status=200 if outcome.done or not outcome.errors else 409)
    return with_events(response, outcome.events)


def _card_of(proposal_id: str) -> InboxCard | None:
    cards = cards_for(ids=[proposal_id])
    return cards[0] if cards else None


def _editing(request: HttpRequest, card: InboxCard, *, form: ProposalEditForm | None = None, status: int = 200,
             error: str | None = None, on_disk: list | None = None) -> HttpResponse:
    """The card with its result in the edit form (a page of its own without JavaScript)."""
    template = "inbox/_card.html" if is_htmx(request) else "inbox/edit_page.html"
    return render(request, template, {"c": card, "edit_form": form, "error": error, "on_disk": on_disk},
                  status=status)


@login_required
@require_GET
def inbox_card(request: HttpRequest, proposal_id: str) -> HttpResponse:
    """One card as it is now (Cancel of an edit puts it back)."""
    card = _card_of(proposal_id)
    if card is None or not is_htmx(request):
        return redirect(reverse("ui:inbox"))
    return render(request, "inbox/_card.html", {"c": card})


@login_required
@require_http_methods(["GET", "POST"])
def inbox_edit(request: HttpRequest, proposal_id: str) -> HttpResponse:
    """Edit before approving: GET shows the merge's or consolidation's result in a form; POST approves the proposal
    with the person's title, content and tags (refused, the text kept, if a memory changed on disk meanwhile)."""
    card = _card_of(proposal_id)
    if card is None:
        if not is_htmx(request):
            _tell(request, "", [f"No proposal {proposal_id[:8]}"])
            return redirect(reverse("ui:inbox"))
        return _answer(request, "inbox/_toast.html", {"errors": [f"No proposal {proposal_id[:8]}"]}, status=404)
    if not card.editable:
        why = "it is already decided" if card.status != "pending" else "approving it writes no text to edit"
        return _editing(request, card, status=409, error=f"This proposal cannot be edited: {why}.")
    try:
        result = proposal_result(proposal_id=card.first.id)
    except OrmahError as exc:  # a memory it reads is gone or unreadable: the card says so
        return _editing(request, card, status=exc.http_status, error=exc.message)
    if request.method == "GET":
        return _editing(request, card, form=ProposalEditForm.for_result(result))
    form = ProposalEditForm.for_result(result, data=request.POST)
    if not form.is_valid():
        return _editing(request, card, form=form, status=422)
    try:
        edit = form.result_edit()
    except ValidationError:
        return _editing(request, card, form=form, status=422)
    try:
        outcome = decide_edited(request, proposal_id=card.first.id, edit=edit, seen=form.cleaned_data["seen"])
    except ProposalChanged as exc:
        return _changed(request, card.first.id, exc)
    if not outcome.done and not is_htmx(request):
        return _editing(request, card, form=form, status=409, error=" ".join(outcome.errors))
    return _decided(request, outcome, ids=[card.first.id], card_key=card.key)


def _changed(request: HttpRequest, proposal_id: str, exc: ProposalChanged) -> HttpResponse:
    """The edit refused because a memory changed on disk: the files as they are now above the person's own text
    (kept); the form takes the new hashes, so approving again, having seen them, applies the person's text."""
    card = _card_of(proposal_id)
    try:
        result = proposal_result(proposal_id=proposal_id)
    except OrmahError as gone:  # a memory it reads was forgotten: nothing left to approve it on
        return _editing(request, card, status=gone.http_status, error=f"{exc.message}. {gone.message}")
    data = request.POST.copy()
    data["seen"] = json.dumps(result.seen, sort_keys=True)
    form = ProposalEditForm.for_result(result, data=data)
    form.is_valid()
    form.add_error(None, "A memory this proposal reads changed on disk since the card was drawn; it now says what "
                         "is shown above your text. Your text is kept below: merge what you need, then Approve with "
                         "these changes applies it to the memories as they are now (Undo reverts it).")
    return _editing(request, card, form=form, status=409, on_disk=exc.details["changed"])


@login_required
@require_POST
def undo_view(request: HttpRequest) -> HttpResponse:
    """Undo the newest action (or the one whose token is posted); answers with the message and the counters."""
    outcome = undo.undo(request, entry_id=request.POST.get("token") or None)
    if outcome is None:
        message, errors, events = "Nothing to undo.", [], {}
    else:
        message = (f"Undone: {outcome.label}." if outcome.ok else f"Not undone: {outcome.label}."
                   if outcome.nothing_done else f"Partly undone: {outcome.label}.")
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
