"""The eight jobs declared as data (seed 001's intervals and sleep-cycle order) and their idempotent Schedule sync."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django_q.models import Schedule

from maintenance.models import JobStateRow
from memory.domain.node import utcnow

logger = logging.getLogger(__name__)
PREFIX = "ormah:"


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str
    func: str  # the django-q2 entry point (a job shell in maintenance.jobs)
    body: str  # the service that does the work, called by the runner with a RunContext
    minutes: int
    uses_llm: bool
    exclusive: bool  # changes memories: holds the maintenance lock
    description: str


JOBS: tuple[JobSpec, ...] = (
    JobSpec("auto_linker", "maintenance.jobs.link_memories_job", "maintenance.services.links.links_run",
            1440, True, True, "Classify and create edges between close memories"),
    JobSpec("decay_manager", "maintenance.jobs.decay_memories_job", "maintenance.services.upkeep.decay_run",
            1440, False, True, "Archive stale working memories; ledger retention"),
    JobSpec("conflict_detector", "maintenance.jobs.detect_conflicts_job", "maintenance.services.conflicts.conflicts_run",
            1440, True, True, "Detect contradictions and evolutions between beliefs"),
    JobSpec("duplicate_merger", "maintenance.jobs.merge_duplicates_job", "maintenance.services.duplicates.duplicates_run",
            1440, True, True, "Merge clear duplicates (undoable); propose likely ones"),
    JobSpec("auto_cluster", "maintenance.jobs.cluster_spaces_job", "maintenance.services.upkeep.cluster_run",
            60, False, True, "Give spaceless memories their neighbours' majority space"),
    JobSpec("consolidator", "maintenance.jobs.consolidate_memories_job",
            "maintenance.services.consolidation.consolidation_run",
            1440, True, True, "Synthesise clusters of working memories into one"),
    JobSpec("importance_scorer", "maintenance.jobs.score_importance_job", "maintenance.services.upkeep.importance_run",
            120, False, True, "Recompute importance from access, edges and recency"),
    JobSpec("index_updater", "maintenance.jobs.update_index_job", "maintenance.services.upkeep.index_run",
            1, False, False, "Incremental derived-index sync"),
)
JOBS_BY_NAME = {spec.name: spec for spec in JOBS}
SLEEP_CYCLE: tuple[str, ...] = ("importance_scorer", "index_updater", "duplicate_merger", "conflict_detector",
                                "auto_linker", "auto_cluster", "consolidator", "decay_manager")


def schedules_sync(*, now: datetime | None = None) -> dict[str, int]:
    """Make django-q2's Schedules match JOBS: create missing, fix drifted, remove retired; paused jobs do not repeat.

    Idempotent: a second call changes nothing. A new schedule first fires one interval from now.
    """
    now = now or utcnow()
    paused = set(JobStateRow.objects.filter(paused=True).values_list("job", flat=True))
    counts = {"created": 0, "updated": 0, "removed": 0, "unchanged": 0}
    for spec in JOBS:
        wanted = {"func": spec.func, "schedule_type": Schedule.MINUTES, "minutes": spec.minutes,
                  "repeats": 0 if spec.name in paused else -1}
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
    names = [PREFIX + spec.name for spec in JOBS]
    counts["removed"] = Schedule.objects.filter(name__startswith=PREFIX).exclude(name__in=names).delete()[0]
    logger.debug("Schedules synced: %s", counts)
    return counts


def schedule_next_runs() -> dict[str, datetime | None]:
    """When each job's schedule fires next."""
    return dict((name.removeprefix(PREFIX), nxt) for name, nxt in
                Schedule.objects.filter(name__startswith=PREFIX).values_list("name", "next_run"))
