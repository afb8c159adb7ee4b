"""The process a job runs in: who it is (host, pid, start time) and whether it is still alive. No Django.

A run-ledger row records its process; a row still "running" whose process is gone was killed mid-run
(maintenance.runner.job_runs_interrupted_close). The start time (clock ticks after boot, /proc/PID/stat) tells a
reused pid from the process that wrote the row; where /proc is missing, a live pid counts as the same process.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

HOST = socket.gethostname()[:255]


@dataclass(frozen=True, slots=True)
class ProcessId:
    host: str
    pid: int
    start: int | None  # clock ticks after boot, from /proc; None where there is no /proc


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, start ticks) of a process from /proc/PID/stat, or None when there is no such file."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2:].split()  # after "pid (comm) ": field 3 (state) onward
    return fields[0].decode(), int(fields[19])  # field 22: starttime


def process_of(pid: int) -> ProcessId:
    """The identity of process `pid` of this host (start None when /proc cannot tell it)."""
    found = _stat(pid)
    return ProcessId(host=HOST, pid=pid, start=None if found is None else found[1])


def this_process() -> ProcessId:
    """The identity of the running process."""
    return process_of(os.getpid())


def process_alive(*, pid: int, start: int | None) -> bool:
    """Whether the process `pid` that started at `start` still runs on this host (a zombie does not)."""
    if os.path.isdir("/proc/self"):
        found = _stat(pid)
        return found is not None and found[0] != "Z" and (start is None or found[1] == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
