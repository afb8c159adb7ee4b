"""REST routes of the maintenance app (mounted at the API root, so paths are written in full)."""

from __future__ import annotations

from django.http import HttpRequest
from ninja import Query, Router, Schema, Status

from maintenance.errors import JobBusy
from maintenance.models import ProposalRow
from maintenance.runner import job_execute, job_pause, sleep_cycle_run
from maintenance.schemas import (
    JobOutcomeOut,
    MaintenanceIn,
    MaintenanceOut,
    GroupDecisionOut,
    MergeOut,
    ProposalDecisionIn,
    ProposalGroupDecisionIn,
    ProposalGroupOut,
    ProposalOut,
    ProposalResultOut,
    TaskOut,
)
from maintenance.selectors import (
    job_runs,
    merges_list,
    node_briefs,
    proposal_group_list,
    proposal_ref,
    proposal_result,
    proposals_list,
    session_latest,
)
from maintenance.services.agent import maintenance_apply, maintenance_begin, maintenance_status
from maintenance.services.proposals import proposal_decide, proposal_group_decide
from maintenance.services.tasks import task_list
from memory.services import merge_undo

router = Router(tags=["maintenance"])


class ProposalFilter(Schema):
    status: str | None = "pending"
    kind: str | None = None
    limit: int = 50


def _proposal(row: ProposalRow, briefs: dict[str, dict]) -> dict:
    preview = row.payload.get("merged_content") or row.payload.get("content")
    return {"id": row.proposal_id, "kind": row.kind, "group_key": row.group_key, "group_label": row.group_label,
            "status": row.status, "action_summary": row.action,
            "reason": row.reason, "score": row.score, "priority": row.priority, "nodes": [briefs[u] for u in row.node_uids if u in briefs],
            "merged_preview": f"---\n{preview}\n---" if preview else None, "payload": row.payload,
            "created_at": row.created_at, "expires_at": row.expires_at, "decided_at": row.decided_at,
            "result": row.result}


# ---------------------------------------------------------------------------
# Agent: proposals, maintenance protocol, merges
# ---------------------------------------------------------------------------

@router.get("/agent/proposals", response=list[ProposalOut], summary="Proposals waiting for review")
def proposals(request: HttpRequest, filters: Query[ProposalFilter]):
    rows = proposals_list(status=filters.status or None, kind=filters.kind, limit=max(1, min(filters.limit, 500)))
    briefs = node_briefs(sorted({u for r in rows for u in r.node_uids}))
    return [_proposal(r, briefs) for r in rows]


@router.post("/agent/proposals/{proposal_id}", response=ProposalOut, summary="Approve or reject a proposal")
def proposal_decision(request: HttpRequest, proposal_id: str, payload: ProposalDecisionIn):
    """`proposal_id` is the id or a unique prefix of it (4+ characters). `result` approves a merge or
    consolidation with an edited title, content or tags; `seen` refuses it if a memory changed since it was read."""
    row = proposal_decide(proposal_id=proposal_ref(proposal_id), action=payload.action, decided_by="api",
                          edit=payload.result, seen=payload.seen)
    return _proposal(row, node_briefs(row.node_uids))


@router.get("/agent/proposals/{proposal_id}/result", response=ProposalResultOut,
            summary="What approving a merge or consolidation would write")
def proposal_result_get(request: HttpRequest, proposal_id: str):
    """The title, content and tags approving would write (tags in `kept_tags` are kept whatever an edit says), and
    `seen`: the file hash of every memory it reads, to send back with an edited approval."""
    return proposal_result(proposal_id=proposal_ref(proposal_id)).__dict__


class GroupFilter(Schema):
    status: str | None = "pending"
    kind: str | None = None
    limit: int = 50
    offset: int = 0


@router.get("/agent/proposal-groups", response=list[ProposalGroupOut],
            summary="Proposals grouped by cause (one decision per group)")
def proposal_groups(request: HttpRequest, filters: Query[GroupFilter]):
    return proposal_group_list(status=filters.status or None, kind=filters.kind,
                               limit=max(1, min(filters.limit, 500)), offset=max(0, filters.offset))


@router.post("/agent/proposal-groups/{group_key}", response=GroupDecisionOut,
             summary="Approve or reject every pending proposal of a group")
def proposal_group_decision(request: HttpRequest, group_key: str, payload: ProposalGroupDecisionIn):
    return proposal_group_decide(group_key=group_key, action=payload.action, decided_by="api").__dict__


def _session(session) -> dict:
    batches = session.batches if session.status == "awaiting_results" else None
    counts = {k: len(v) for k, v in session.batches.items()}
    return {"job_id": session.session_id, "status": session.status, "batches": batches,
            "expires_at": session.expires_at, "apply_summary": session.apply_summary or None,
            "summary": ", ".join(f"{n} {k}" for k, n in counts.items()) or "nothing to review"}


@router.get("/agent/maintenance", response={200: MaintenanceOut}, summary="Agent maintenance: status")
def maintenance_get(request: HttpRequest, job_id: str | None = None):
    session = maintenance_status(session_id=job_id) if job_id else session_latest()
    return Status(200, _session(session) if session else {"status": "idle", "summary": "no maintenance session yet"})


@router.post("/agent/maintenance", response={200: MaintenanceOut, 202: MaintenanceOut},
             summary="Agent maintenance: {} starts phase 1, {job_id} polls, {job_id, results} applies phase 2")
def maintenance_post(request: HttpRequest, payload: MaintenanceIn):
    if payload.job_id and payload.results is not None:
        return Status(200, _session(maintenance_apply(session_id=payload.job_id, results=payload.results)))
    if payload.job_id:
        return Status(200, _session(maintenance_status(session_id=payload.job_id)))
    try:
        session = maintenance_begin()
    except JobBusy:
        return Status(200, {"status": "busy", "summary": "a maintenance job is running; try again later"})
    return Status(202 if session.status == "awaiting_results" else 200, _session(session))


@router.get("/agent/merges", response=list[MergeOut], summary="Recent merges (undoable)")
def merges(request: HttpRequest, limit: int = 20):
    return [{"merge_id": m.merge_id, "kept_id": m.kept_uid, "removed_id": m.removed_uid, "reason": m.reason,
             "merged_at": m.merged_at, "undone_at": m.undone_at} for m in merges_list(limit=max(1, min(limit, 200)))]


@router.post("/agent/merges/{merge_id}/undo", response=MergeOut, summary="Undo a merge (id or prefix)")
def merge_undo_route(request: HttpRequest, merge_id: str):
    """Both memories (and the neighbours the merge rewrote) get their bytes from before the merge back.

    When the kept memory was changed after the merge (by hand in its file, through the API, by a job), undoing
    would lose that change: 409 `conflict` ("Memory 'title' (id) changed after the merge ...; nothing was undone",
    details: merge_id, node_id, changed), and nothing changes: the removed memory stays removed, and the merge can
    be undone once the kept memory's file holds the merge's bytes again. Undone already, or its removed memory live
    again: 409 too.
    """
    m = merge_undo(ref=merge_id)
    return {"merge_id": m.merge_id, "kept_id": m.kept_uid, "removed_id": m.removed_uid, "reason": m.reason,
            "merged_at": m.merged_at, "undone_at": m.undone_at}


# ---------------------------------------------------------------------------
# Admin: tasks and the sleep cycle
# ---------------------------------------------------------------------------

@router.get("/admin/tasks", response=list[TaskOut], summary="The maintenance jobs")
def tasks(request: HttpRequest):
    return task_list()


@router.post("/admin/tasks/run-all", response=list[JobOutcomeOut], summary="Sleep cycle: every job, in order")
def tasks_run_all(request: HttpRequest):
    return [o.as_dict() for o in sleep_cycle_run(trigger="api")]


@router.get("/admin/tasks/runs", response=list[JobOutcomeOut], summary="The run ledger, newest first")
def tasks_runs(request: HttpRequest, job: str | None = None, limit: int = 50):
    return [{"job": r.job, "status": r.status, "counts": r.counts, "error": r.error, "started_at": r.started_at,
             "finished_at": r.finished_at} for r in job_runs(job=job, limit=max(1, min(limit, 500)))]


@router.post("/admin/tasks/{name}/run", response=JobOutcomeOut, summary="Run one job now")
def task_run(request: HttpRequest, name: str):
    return job_execute(name, trigger="api").as_dict()


@router.post("/admin/tasks/{name}/pause", response=list[TaskOut], summary="Pause a job's schedule")
def task_pause(request: HttpRequest, name: str):
    job_pause(name, paused=True)
    return task_list()


@router.post("/admin/tasks/{name}/resume", response=list[TaskOut], summary="Resume a job's schedule")
def task_resume(request: HttpRequest, name: str):
    job_pause(name, paused=False)
    return task_list()
