"""Every process of the serve tree dies with its parent: PR_SET_PDEATHSIG on Linux, armed in each child.

The supervisor arms its direct children in `preexec_fn`; inside those children `install_for_descendants` makes
every later fork (gunicorn's workers, django-q's sentinel, workers, monitor and pusher) arm it too, because the
kernel clears the death signal of a forked child. The signal is SIGKILL: a dead supervisor is a crash, and the
write door is crash-safe; SIGTERM let the job cluster linger for minutes in the review (issue 12 defect 4).
Elsewhere these are no-ops and the supervisor's process groups are the only net.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1
DEATH_SIGNAL = signal.SIGKILL
_installed = False


def arm(sig: int = DEATH_SIGNAL) -> None:
    """Ask the kernel to send `sig` to this process when its parent dies; die now if the parent is already gone."""
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(sig))
    if parent == 1 or os.getppid() != parent:  # the parent died before the signal was armed
        os.kill(os.getpid(), sig)


def preexec(expected_parent: int):
    """A `preexec_fn` arming the death signal in a direct child of `expected_parent` (None off Linux)."""
    if not sys.platform.startswith("linux"):
        return None

    def run() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(DEATH_SIGNAL))
        if os.getppid() != expected_parent:
            os.kill(os.getpid(), DEATH_SIGNAL)

    return run


def install_for_descendants() -> None:
    """Arm the death signal in every process forked from this one from now on (idempotent)."""
    global _installed
    if _installed or not sys.platform.startswith("linux"):
        return
    os.register_at_fork(after_in_child=arm)
    _installed = True
