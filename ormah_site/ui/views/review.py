"""Proposals outside the inbox: the node panel's pending proposals (inbox cards) and the merge history's undo."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from memory.errors import OrmahError
from memory.services import merge_undo
from ormah_site.ui.http import is_htmx, with_events
from ormah_site.ui.view_models.inbox import cards_of
from ormah_site.ui.view_models.review import merge_history, proposals_for_node


@login_required
@require_GET
def node_proposals(request: HttpRequest, uid: str) -> HttpResponse:
    """Pending proposals about one memory, for its node panel."""
    return render(request, "inbox/_node_cards.html", {"cards": cards_of(proposals_for_node(uid=uid))})


@login_required
@require_POST
def merge_undo_view(request: HttpRequest, merge_id: str) -> HttpResponse:
    """Undo a merge: both memories come back byte for byte."""
    error = None
    try:
        row = merge_undo(ref=merge_id)
        events = {"ormah:changed": {"ids": [row.kept_uid, row.removed_uid]}}
    except OrmahError as exc:
        error, events = exc.message, {}
    if not is_htmx(request):
        if error:
            messages.error(request, error)
        else:
            messages.info(request, "Merge undone: both memories are back.")
        return redirect(f"{reverse('ui:inbox')}?view=decided")
    response = render(request, "maintenance/_merge_history.html", {"merges": merge_history(), "undo_error": error},
                      status=200 if error is None else 409)
    return with_events(response, events)
