"""What the task list shows: each job's schedule, pause state and latest run."""

from __future__ import annotations

from maintenance.models import JobRunRow, JobStateRow
from maintenance.runner import JobOutcome
from maintenance.registry import jobs
from maintenance.schedules import schedule_next_runs


def _outcome(row: JobRunRow | None) -> dict | None:
    if row is None:
        return None
    return JobOutcome(job=row.job, status=row.status, counts=row.counts, error=row.error,
                      started_at=row.started_at, finished_at=row.finished_at).as_dict()


def task_list() -> list[dict]:
    """Every registered job with interval, next run, paused flag and last run."""
    next_runs = schedule_next_runs()
    paused = set(JobStateRow.objects.filter(paused=True).values_list("job", flat=True))
    return [{
        "id": spec.name, "name": spec.name, "description": spec.description, "interval_minutes": spec.minutes,
        "uses_llm": spec.uses_llm, "next_run": next_runs.get(spec.name), "paused": spec.name in paused,
        "last_run": _outcome(JobRunRow.objects.filter(job=spec.name).order_by("-started_at", "-id").first()),
    } for spec in jobs()]
