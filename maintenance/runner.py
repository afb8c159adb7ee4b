"""Running jobs: the run ledger, the maintenance lock, the time bound, the LLM per run, and the sleep cycle."""

from __future__ import annotations

import logging
import time
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from datetime import datetime

from maintenance.conf import get_conf
from maintenance.errors import JobBusy, UnknownJob
from maintenance.llm import llm_for_run
from maintenance.locking import job_lock
from maintenance.models import JobRunRow, JobStateRow
from maintenance.processes import HOST, process_alive, this_process
from maintenance.registry import job_spec, jobs
from maintenance.schedules import schedules_sync
from maintenance.services.context import RunContext
from memory.domain.node import utcnow
from memory.services import automated_writes

logger = logging.getLogger(__name__)

INTERRUPTED = "interrupted"  # the run's process ended (killed, or the machine stopped) before the run did


@dataclass(frozen=True)
class JobOutcome:
    job: str
    status: str  # ok | partial (stopped at a bound) | busy | error
    counts: dict = field(default_factory=dict)
    error: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None

    def as_dict(self) -> dict:
        data = asdict(self)
        data["seconds"] = round((self.finished_at - self.started_at).total_seconds(), 3) if self.finished_at else None
        return data


def job_execute(name: str, *, trigger: str = "manual", now: datetime | None = None) -> JobOutcome:
    """Run one job now, whatever its schedule; the outcome is also written to the run ledger. Raises UnknownJob."""
    spec = job_spec(name)
    if spec is None:
        raise UnknownJob(f"No job named {name}; jobs: {', '.join(s.name for s in jobs())}")
    conf = get_conf()
    started = utcnow()
    job_runs_interrupted_close(now=started)
    me = this_process()
    run = JobRunRow.objects.create(job=name, trigger=trigger, started_at=started, host=me.host, pid=me.pid,
                                   proc_start=me.start)
    ctx = RunContext(job=name, conf=conf, now=now or started, deadline=time.monotonic() + conf.time_limit)
    status, error = "ok", ""
    try:
        with job_lock(conf.job_lock_file) if spec.exclusive else nullcontext():
            ctx.llm = llm_for_run(conf.llm, deadline=ctx.deadline) if spec.uses_llm else None
            try:
                with automated_writes(f"job {name}"):  # jobs never edit a read-only core block (docs/trust.md)
                    spec.body()(ctx)
            finally:
                if ctx.llm is not None:
                    ctx.counts["llm_calls"] = ctx.llm.calls
                    ctx.llm.close()
        status = "ok" if ctx.complete else "partial"
    except JobBusy as exc:
        status, error = "busy", exc.message
    except Exception as exc:  # noqa: BLE001
        # Trigger: a bug or an unexpected failure inside a job. Why: the scheduler, the sleep cycle and the other
        # jobs must go on. Outcome: the run is recorded as an error with the message; the stack goes to the log.
        logger.exception("Job %s failed", name)
        status, error = "error", f"{type(exc).__name__}: {exc}"[:2000]
    outcome = JobOutcome(job=name, status=status, counts=dict(ctx.counts), error=error, started_at=started,
                         finished_at=utcnow())
    JobRunRow.objects.filter(pk=run.pk).update(status=status, counts=outcome.counts, error=error,
                                               finished_at=outcome.finished_at)
    logger.info("Job %s (%s): %s %s", name, trigger, status, outcome.counts)
    return outcome


def job_runs_interrupted_close(*, now: datetime) -> int:
    """Close the runs of this host still "running" whose process is gone (killed mid-run: SIGKILL, django-q2's
    timeout, a crash) as interrupted, with the process in the error; returns how many. Each job run and each job
    worker the cluster starts calls this; rows of other hosts (PostgreSQL) and rows without a process are left to
    the ledger's retention (maintenance.services.upkeep, a day)."""
    closed = 0
    for row in JobRunRow.objects.filter(finished_at__isnull=True, host=HOST, pid__isnull=False).only(
            "id", "pid", "proc_start"):
        if process_alive(pid=row.pid, start=row.proc_start):
            continue
        error = (f"interrupted: its process (pid {row.pid} on {HOST}) ended before the run did; found "
                 f"{now:%Y-%m-%d %H:%M:%S} UTC, the end time")
        closed += JobRunRow.objects.filter(pk=row.pk, finished_at__isnull=True).update(
            status=INTERRUPTED, error=error, finished_at=now)
    if closed:
        logger.warning("Closed %d job run(s) left running by a process that ended", closed)
    return closed


def sleep_cycle_run(*, trigger: str = "run_all", now: datetime | None = None) -> list[JobOutcome]:
    """Every job once, in sleep-cycle order, holding the maintenance lock throughout (jobs report busy if held)."""
    conf = get_conf()
    names = [spec.name for spec in jobs()]
    try:
        with job_lock(conf.job_lock_file):
            return [job_execute(name, trigger=trigger, now=now) for name in names]
    except JobBusy:
        return [job_execute(name, trigger=trigger, now=now) for name in names]


def job_pause(name: str, *, paused: bool = True) -> None:
    """Pause or resume a job's schedule (a manual run still works). Raises UnknownJob."""
    if job_spec(name) is None:
        raise UnknownJob(f"No job named {name}")
    JobStateRow.objects.update_or_create(job=name, defaults={"paused": paused})
    schedules_sync()
