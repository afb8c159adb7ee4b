"""Proposal review: proposals by kind with bulk decisions, the node panel's proposals, and merge undo.

Decisions go through maintenance.services.proposals.proposal_decide and memory.services.merge_undo.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from maintenance.selectors import proposal_status_counts
from maintenance.services.proposals import proposal_decide
from memory.errors import OrmahError
from memory.services import merge_undo
from ormah_site.ui.http import is_htmx, with_events
from ormah_site.ui.view_models.review import (
    ProposalView,
    merge_history,
    proposal_groups,
    proposal_view,
    proposals_for_node,
)

STATUSES = ("pending", "approved", "rejected", "expired")


def _graph_events(view: ProposalView | None) -> dict:
    """What an applied proposal changed, as the events graph.js listens for."""
    if view is None or view.status != "approved":
        return {}
    r = view.result
    if view.kind == "merge":
        return {"ormah:removed": {"ids": [r.get("removed")]}, "ormah:changed": {"ids": [r.get("kept")]}}
    if view.kind in ("link", "conflict"):
        return {"ormah:changed": {"ids": [r.get("source"), r.get("target")]}}
    if view.kind == "consolidation":
        return {"ormah:changed": {"ids": [n.uid for n in view.nodes]}}
    return {"ormah:changed": {"ids": [n.uid for n in view.nodes]}}


# ---------------------------------------------------------------------------
# Proposals
# ---------------------------------------------------------------------------

@login_required
@require_GET
def proposals_page(request: HttpRequest) -> HttpResponse:
    """Proposals grouped by kind with the nodes side by side, bulk decisions, and the merge history."""
    status = request.GET.get("status", "pending")
    status = status if status in STATUSES else "pending"
    groups = proposal_groups(status=status)
    counts = proposal_status_counts()
    return render(request, "maintenance/proposals.html", {
        "groups": groups, "status": status, "tabs": [(s, counts.get(s, 0)) for s in STATUSES],
        "merges": merge_history(),
    })


@login_required
@require_GET
def node_proposals(request: HttpRequest, uid: str) -> HttpResponse:
    """Pending proposals about one memory, for its node panel."""
    views = proposals_for_node(uid=uid)
    return render(request, "maintenance/_node_proposals.html", {"proposals": views, "compact": True})


@login_required
@require_POST
def proposal_decision(request: HttpRequest, proposal_id: str) -> HttpResponse:
    """Approve (applied through memory services) or reject one proposal; answers with its card."""
    action = request.POST.get("action", "")
    error = None
    try:
        proposal_decide(proposal_id=proposal_id, action=action, decided_by=f"ui:{request.user.get_username()}")
    except OrmahError as exc:
        error = exc.message
    view = proposal_view(proposal_id=proposal_id)
    if not is_htmx(request):
        return redirect("ui:proposals")
    response = render(request, "maintenance/_proposal.html", {
        "p": view, "error": error, "compact": request.POST.get("compact") == "1",
    }, status=200 if error is None else 409)
    return with_events(response, _graph_events(view) if error is None else {})


@login_required
@require_POST
def proposals_bulk(request: HttpRequest) -> HttpResponse:
    """Approve or reject every selected proposal; failures are listed, the rest are applied."""
    action = request.POST.get("action", "")
    errors, events = [], {"ormah:removed": {"ids": []}, "ormah:changed": {"ids": []}}
    decided = 0
    for proposal_id in request.POST.getlist("ids"):
        try:
            proposal_decide(proposal_id=proposal_id, action=action, decided_by=f"ui:{request.user.get_username()}")
            decided += 1
        except OrmahError as exc:
            errors.append(f"{proposal_id[:8]}: {exc.message}")
            continue
        for name, detail in _graph_events(proposal_view(proposal_id=proposal_id)).items():
            events[name]["ids"].extend(detail["ids"])
    if not is_htmx(request):
        return redirect("ui:proposals")
    groups = proposal_groups(status="pending")
    response = render(request, "maintenance/_proposal_groups.html", {
        "groups": groups, "status": "pending",
        "bulk_notice": f"{decided} proposal{'s' if decided != 1 else ''} {action}d." if decided else None,
        "bulk_errors": errors,
    })
    return with_events(response, {k: v for k, v in events.items() if v["ids"]})


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
        return redirect("ui:proposals")
    response = render(request, "maintenance/_merge_history.html", {"merges": merge_history(), "undo_error": error},
                      status=200 if error is None else 409)
    return with_events(response, events)
