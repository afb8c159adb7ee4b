"""The one django-q2 entry point of the scheduled jobs: run a registered job by its name."""

from __future__ import annotations

from maintenance.runner import job_execute


def scheduled_job(name: str) -> dict:
    """Run job `name` through the runner (ledger, lock, time bound) and hand django-q2 a plain dict."""
    return job_execute(name, trigger="schedule").as_dict()
