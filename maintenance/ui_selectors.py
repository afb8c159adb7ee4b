"""Read-only selectors for the maintenance screens: proposals grouped for review, merge history, the job dashboard.

Built on maintenance.selectors and maintenance.services.tasks (reads only); every value returned is evaluated.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from maintenance.models import ProposalRow
from maintenance.schedules import JOBS_BY_NAME, SLEEP_CYCLE
from maintenance.selectors import job_runs, merges_list, proposals_list
from maintenance.services.tasks import task_list
from memory.ui_selectors import NodeCard, node_cards

KIND_TITLES = {
    "merge": "Merges (near-duplicates)", "conflict": "Conflicts and evolutions", "link": "New connections",
    "consolidation": "Consolidations", "decay": "Archive (decay)",
}
KIND_ORDER = ("merge", "conflict", "consolidation", "link", "decay")
SLEEP_CYCLE_NAME = "sleep_cycle"
STALE_RUN = timedelta(hours=2)  # a run "running" for longer than this crashed without closing its row


# ---------------------------------------------------------------------------
# Proposals
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ProposalView:
    id: str
    kind: str
    status: str
    action: str
    reason: str
    score: float
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None
    decided_by: str
    result: dict
    nodes: list[NodeCard]
    preview_title: str | None = None
    preview_content: str | None = None
    keep_id: str | None = None
    discard_id: str | None = None
    edge: dict | None = None  # link/conflict: source, target, edge, weight


@dataclass(frozen=True)
class ProposalGroup:
    kind: str
    title: str
    proposals: list[ProposalView]


def _views(rows: list[ProposalRow]) -> list[ProposalView]:
    cards = node_cards(uids=sorted({u for r in rows for u in r.node_uids}))
    out = []
    for r in rows:
        p = r.payload or {}
        edge = None
        if r.kind in ("link", "conflict") and p.get("source_id"):
            edge = {"source": p.get("source_id"), "target": p.get("target_id"), "edge": p.get("edge"),
                    "weight": p.get("weight")}
        out.append(ProposalView(
            id=r.proposal_id, kind=r.kind, status=r.status, action=r.action, reason=r.reason, score=r.score,
            created_at=r.created_at, expires_at=r.expires_at, decided_at=r.decided_at, decided_by=r.decided_by,
            result=r.result or {}, nodes=[cards[u] for u in r.node_uids],
            preview_title=p.get("merged_title") or p.get("title"),
            preview_content=p.get("merged_content") or p.get("content"),
            keep_id=p.get("keep_id"), discard_id=p.get("discard_id"), edge=edge,
        ))
    return out


def proposal_groups(*, status: str = "pending", limit: int = 200) -> list[ProposalGroup]:
    """Proposals of one status grouped by kind (merges first), strongest first within a group."""
    views = _views(proposals_list(status=status, limit=limit))
    by_kind: dict[str, list[ProposalView]] = {}
    for v in views:
        by_kind.setdefault(v.kind, []).append(v)
    kinds = [k for k in KIND_ORDER if k in by_kind] + sorted(k for k in by_kind if k not in KIND_ORDER)
    return [ProposalGroup(kind=k, title=KIND_TITLES.get(k, k.capitalize()), proposals=by_kind[k]) for k in kinds]


def proposal_view(*, proposal_id: str) -> ProposalView | None:
    """One proposal for re-rendering after a decision (None when there is no such proposal)."""
    row = ProposalRow.objects.filter(proposal_id=proposal_id).first()
    return _views([row])[0] if row is not None else None


def proposals_for_node(*, uid: str, limit: int = 20) -> list[ProposalView]:
    """Pending proposals that name a memory (for the node panel)."""
    rows = [r for r in proposals_list(status="pending", limit=500) if uid in r.node_uids][:limit]
    return _views(rows)


def proposal_status_counts() -> dict[str, int]:
    """How many proposals there are per status."""
    return dict(Counter(ProposalRow.objects.values_list("status", flat=True)))


@dataclass(frozen=True)
class MergeView:
    merge_id: str
    kept: NodeCard
    removed: NodeCard
    reason: str
    merged_at: datetime
    undone_at: datetime | None


def merge_history(*, limit: int = 20) -> list[MergeView]:
    """Recent merges, newest first, with cards of both memories (the removed one exists again after an undo)."""
    rows = merges_list(limit=limit)
    cards = node_cards(uids=sorted({u for m in rows for u in (m.kept_uid, m.removed_uid)}))
    return [MergeView(merge_id=m.merge_id, kept=cards[m.kept_uid], removed=cards[m.removed_uid], reason=m.reason,
                      merged_at=m.merged_at, undone_at=m.undone_at) for m in rows]


# ---------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class RunView:
    job: str
    trigger: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    seconds: float | None
    counts: dict
    error: str


@dataclass(frozen=True)
class JobView:
    name: str
    description: str
    interval_minutes: int
    uses_llm: bool
    paused: bool
    next_run: datetime | None
    last: RunView | None
    state: str  # idle | queued | running


@dataclass(frozen=True)
class Dashboard:
    jobs: list[JobView]
    runs: list[RunView]
    queued: dict[str, datetime] = field(default_factory=dict)  # still waiting or running, by job (or sleep_cycle)
    sleep_done: int | None = None  # jobs of a queued sleep cycle finished so far
    sleep_total: int = len(SLEEP_CYCLE)

    @property
    def busy(self) -> bool:
        return bool(self.queued) or any(j.state != "idle" for j in self.jobs)


def _run(row) -> RunView:
    seconds = round((row.finished_at - row.started_at).total_seconds(), 2) if row.finished_at else None
    return RunView(job=row.job, trigger=row.trigger, status=row.status, started_at=row.started_at,
                   finished_at=row.finished_at, seconds=seconds, counts=row.counts or {}, error=row.error)


def jobs_dashboard(*, now: datetime, queued: dict[str, datetime] | None = None, run_limit: int = 30) -> Dashboard:
    """Every job with its schedule, state and last run; the run ledger; which queued requests are still open.

    `queued` maps a job name (or "sleep_cycle") to when the UI queued it; an entry stays open until a run of
    that job (every sleep-cycle job, for the sleep cycle) has started after that moment and finished.
    """
    queued = dict(queued or {})
    runs = [_run(r) for r in job_runs(limit=max(run_limit, 200))]
    open_: dict[str, datetime] = {}
    sleep_done = None
    for name, at in queued.items():
        after = [r for r in runs if r.started_at >= at]
        if name == SLEEP_CYCLE_NAME:
            finished = {r.job for r in after if r.finished_at is not None and r.job in SLEEP_CYCLE}
            sleep_done = len(finished)
            if len(finished) < len(SLEEP_CYCLE):
                open_[name] = at
        elif name in JOBS_BY_NAME and not any(r.job == name and r.finished_at is not None for r in after):
            open_[name] = at
    jobs = []
    for task in task_list():
        name = task["name"]
        running = any(r.job == name and r.finished_at is None and now - r.started_at < STALE_RUN for r in runs)
        state = "running" if running else ("queued" if name in open_ else "idle")
        last = next((r for r in runs if r.job == name and r.finished_at is not None), None)
        jobs.append(JobView(name=name, description=task["description"], interval_minutes=task["interval_minutes"],
                            uses_llm=task["uses_llm"], paused=task["paused"], next_run=task["next_run"], last=last,
                            state=state))
    return Dashboard(jobs=jobs, runs=runs[:run_limit], queued=open_, sleep_done=sleep_done)
