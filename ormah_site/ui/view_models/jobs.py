"""The jobs dashboard's view-model: every job with its schedule, state and last run, and the run ledger.

Built on maintenance.selectors and maintenance.services.tasks (reads only); every value returned is evaluated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from maintenance.schedules import JOBS_BY_NAME, SLEEP_CYCLE
from maintenance.selectors import job_runs
from maintenance.services.tasks import task_list

SLEEP_CYCLE_NAME = "sleep_cycle"
STALE_RUN = timedelta(hours=2)  # a run "running" for longer than this crashed without closing its row


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
    order = {name: i for i, name in enumerate(SLEEP_CYCLE)}  # the order the sleep cycle runs them, then by name
    jobs.sort(key=lambda j: (order.get(j.name, len(order)), j.name))
    return Dashboard(jobs=jobs, runs=runs[:run_limit], queued=open_, sleep_done=sleep_done)
