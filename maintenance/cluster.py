"""The job cluster's worker names itself, so `ps`, `top`, the fault tests and the benches tell it from the cluster's
monitor and pusher: django-q2 forks a new one after every task (settings.Q_CLUSTER "recycle"), so it is neither the
sentinel's first child nor the same pid for long."""

from __future__ import annotations

import ctypes
import sys

JOB_WORKER_NAME = "ormah-job"  # /proc/PID/comm (at most 15 bytes)
PR_SET_NAME = 15


def job_worker_name(**kwargs) -> None:
    """django-q2's `post_spawn` receiver, run in each new job worker: name the process (Linux; elsewhere nothing)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NAME, JOB_WORKER_NAME.encode())
