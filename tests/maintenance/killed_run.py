"""Subprocess helper of tests/maintenance/test_interrupted_runs.py: `python -m tests.maintenance.killed_run` on the
home in ORMAH_HOME runs a job (registered here, in this process only) whose body prints "started" and then sleeps,
so the test can kill the process mid-run with the run-ledger row still "running"."""

from __future__ import annotations

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "ormah_site.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from maintenance.registry import maintenance_job  # noqa: E402
from maintenance.runner import job_execute  # noqa: E402

SLOW_JOB = "slow_test_job"


@maintenance_job(SLOW_JOB, every_minutes=60, cycle=99, description="sleeps until it is killed (tests only)",
                 exclusive=False)
def slow_body(ctx) -> None:
    print("started", flush=True)
    time.sleep(600)


if __name__ == "__main__":
    call_command("migrate", interactive=False, verbosity=0)
    call_command("createcachetable", verbosity=0)
    job_execute(SLOW_JOB, trigger="cli")
