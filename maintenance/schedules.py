"""django-q2 Schedules synced idempotently from the job registry (maintenance/registry.py)."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django_q.models import Schedule

from maintenance.locking import schedules_lock
from maintenance.models import JobStateRow
from maintenance.registry import JobSpec, job_spec, jobs
from memory.domain.node import utcnow

logger = logging.getLogger(__name__)
PREFIX = "ormah:"
ENTRY_POINT = "maintenance.jobs.scheduled_job"  # every schedule calls it with the job's name


def __getattr__(name: str):
    """JOBS, JOBS_BY_NAME and SLEEP_CYCLE, read from the registry when asked for (it loads lazily)."""
    if name == "JOBS":
        return jobs()
    if name == "JOBS_BY_NAME":
        return {spec.name: spec for spec in jobs()}
    if name == "SLEEP_CYCLE":
        return tuple(spec.name for spec in jobs())
    raise AttributeError(name)


def _wanted(spec: JobSpec, paused: set[str]) -> dict:
    return {"func": ENTRY_POINT, "args": repr((spec.name,)), "schedule_type": Schedule.MINUTES,
            "minutes": spec.minutes, "repeats": 0 if spec.name in paused else -1}


def schedules_sync(*, now: datetime | None = None) -> dict[str, int]:
    """Make django-q2's Schedules match the registry: create missing, fix drifted, remove retired; paused jobs do
    not repeat.

    Idempotent: a second call changes nothing. A new schedule first fires one interval from now. Hosts sharing a
    PostgreSQL database sync one at a time (maintenance.locking.schedules_lock).
    """
    with schedules_lock():
        return _sync(now or utcnow())


def _sync(now: datetime) -> dict[str, int]:
    paused = set(JobStateRow.objects.filter(paused=True).values_list("job", flat=True))
    counts = {"created": 0, "updated": 0, "removed": 0, "unchanged": 0}
    for spec in jobs():
        wanted = _wanted(spec, paused)
        schedule = Schedule.objects.filter(name=PREFIX + spec.name).first()
        if schedule is None:
            Schedule.objects.create(name=PREFIX + spec.name, next_run=now + timedelta(minutes=spec.minutes), **wanted)
            counts["created"] += 1
            continue
        drift = {k: v for k, v in wanted.items() if getattr(schedule, k) != v}
        if not drift:
            counts["unchanged"] += 1
            continue
        if "minutes" in drift or (drift.get("repeats") == -1 and schedule.next_run and schedule.next_run < now):
            drift["next_run"] = now + timedelta(minutes=spec.minutes)
        Schedule.objects.filter(pk=schedule.pk).update(**drift)
        counts["updated"] += 1
    names = [PREFIX + spec.name for spec in jobs()]
    counts["removed"] = Schedule.objects.filter(name__startswith=PREFIX).exclude(name__in=names).delete()[0]
    logger.debug("Schedules synced: %s", counts)
    return counts


def schedule_next_runs() -> dict[str, datetime | None]:
    """When each job's schedule fires next."""
    return dict((name.removeprefix(PREFIX), nxt) for name, nxt in
                Schedule.objects.filter(name__startswith=PREFIX).values_list("name", "next_run"))


__all__ = ["ENTRY_POINT", "PREFIX", "job_spec", "jobs", "schedule_next_runs", "schedules_sync"]
