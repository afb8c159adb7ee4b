"""The job cluster's worker names itself, so `ps`, `top`, the fault tests and the benches tell it from the cluster's
monitor and pusher: django-q2 forks a new one after every task (settings.Q_CLUSTER "recycle"), so it is neither the
sentinel's first child nor the same pid for long. Each new worker (the cluster's start, and the one that replaces a
worker killed mid-task) also closes the runs a dead process left "running" (maintenance.runner)."""

from __future__ import annotations

import ctypes
import logging
import sys

from maintenance.runner import job_runs_interrupted_close
from memory.domain.node import utcnow

logger = logging.getLogger(__name__)

JOB_WORKER_NAME = "ormah-job"  # /proc/PID/comm (at most 15 bytes)
PR_SET_NAME = 15


def job_worker_name(**kwargs) -> None:
    """django-q2's `post_spawn` receiver, run in each new job worker: name the process (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, JOB_WORKER_NAME.encode())


def interrupted_runs_close(**kwargs) -> None:
    """django-q2's `post_spawn` receiver: close the runs a killed process left "running" (job_runs_interrupted_close)."""
    try:
        job_runs_interrupted_close(now=utcnow())
    except Exception:  # noqa: BLE001
        # Trigger: the database unreachable as the worker starts. Why: a worker that fails to start runs no job at
        # all. Outcome: logged; the next run of any job closes those rows.
        logger.exception("Could not close the job runs left running")
