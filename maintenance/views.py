"""Web UI of the maintenance app: proposal review (with bulk decisions and merge undo) and the jobs dashboard.

Decisions go through maintenance.services.proposals.proposal_decide and memory.services.merge_undo; jobs are
queued to the django-q2 cluster (the one `ormah serve` runs), so a long sleep cycle never ties up a web worker.
"""

from __future__ import annotations

import json
from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_q.tasks import async_task

from maintenance.runner import job_pause
from maintenance.schedules import JOBS_BY_NAME
from maintenance.services.proposals import proposal_decide
from maintenance.ui_selectors import (
    SLEEP_CYCLE_NAME,
    ProposalView,
    jobs_dashboard,
    merge_history,
    proposal_groups,
    proposal_status_counts,
    proposal_view,
    proposals_for_node,
)
from memory.domain.node import utcnow
from memory.errors import OrmahError
from memory.services import merge_undo

STATUSES = ("pending", "approved", "rejected", "expired")
QUEUE_KEY = "ormah_jobs_queued"


def _htmx(request: HttpRequest) -> bool:
    return request.headers.get("HX-Request") == "true"


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


def _with_events(response: HttpResponse, events: dict) -> HttpResponse:
    if events:
        response["HX-Trigger"] = json.dumps(events)
    return response


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
    if not _htmx(request):
        return redirect("ui:proposals")
    response = render(request, "maintenance/_proposal.html", {
        "p": view, "error": error, "compact": request.POST.get("compact") == "1",
    }, status=200 if error is None else 409)
    return _with_events(response, _graph_events(view) if error is None else {})


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
    if not _htmx(request):
        return redirect("ui:proposals")
    groups = proposal_groups(status="pending")
    response = render(request, "maintenance/_proposal_groups.html", {
        "groups": groups, "status": "pending",
        "bulk_notice": f"{decided} proposal{'s' if decided != 1 else ''} {action}d." if decided else None,
        "bulk_errors": errors,
    })
    return _with_events(response, {k: v for k, v in events.items() if v["ids"]})


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
    if not _htmx(request):
        return redirect("ui:proposals")
    response = render(request, "maintenance/_merge_history.html", {"merges": merge_history(), "undo_error": error},
                      status=200 if error is None else 409)
    return _with_events(response, events)


# ---------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------

def _queued(request: HttpRequest) -> dict[str, datetime]:
    return {k: datetime.fromisoformat(v) for k, v in request.session.get(QUEUE_KEY, {}).items()}


def _dashboard_response(request: HttpRequest, template: str, *, notice: str | None = None,
                        error: str | None = None) -> HttpResponse:
    dashboard = jobs_dashboard(now=utcnow(), queued=_queued(request))
    request.session[QUEUE_KEY] = {k: v.isoformat() for k, v in dashboard.queued.items()}
    return render(request, template, {"d": dashboard, "notice": notice, "error": error})


@login_required
@require_GET
def jobs_page(request: HttpRequest) -> HttpResponse:
    """The eight jobs: schedule, state, last run (result, duration, errors); run one now or the sleep cycle."""
    return _dashboard_response(request, "maintenance/jobs.html")


@login_required
@require_GET
def jobs_table(request: HttpRequest) -> HttpResponse:
    """The dashboard body, polled every two seconds while something is queued or running."""
    return _dashboard_response(request, "maintenance/_jobs_table.html")


def _enqueue(request: HttpRequest, key: str, func: str, *args, **kwargs) -> None:
    queued = request.session.get(QUEUE_KEY, {})
    queued[key] = utcnow().isoformat()
    request.session[QUEUE_KEY] = queued
    async_task(func, *args, task_name=f"ormah-ui:{key}", **kwargs)


@login_required
@require_POST
def job_run(request: HttpRequest, name: str) -> HttpResponse:
    """Queue one job to run now on the job cluster."""
    if name not in JOBS_BY_NAME:
        return _dashboard_response(request, "maintenance/_jobs_table.html", error=f"No job named {name}")
    _enqueue(request, name, "maintenance.runner.job_execute", name, trigger="ui")
    if not _htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", notice=f"{name} queued.")


@login_required
@require_POST
def sleep_cycle(request: HttpRequest) -> HttpResponse:
    """Queue the sleep cycle: every job once, in order."""
    _enqueue(request, SLEEP_CYCLE_NAME, "maintenance.runner.sleep_cycle_run", trigger="ui")
    if not _htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", notice="Sleep cycle queued.")


@login_required
@require_POST
def job_pause_toggle(request: HttpRequest, name: str) -> HttpResponse:
    """Pause or resume a job's schedule (a manual run still works)."""
    error = None
    try:
        job_pause(name, paused=request.POST.get("paused") == "1")
    except OrmahError as exc:
        error = exc.message
    if not _htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", error=error)
