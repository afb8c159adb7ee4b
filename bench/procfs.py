"""Linux /proc readers for what watches a real `ormah serve` tree: the serve benches (bench.serve_tree) and the fault
suite (tests/faults/support.py). Standard library only (no psutil, nothing of the app: the benches serve other
checkouts too). Every reader answers None, "" or an empty list for a process that is gone.
"""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def stat_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat from the state on (index 0 is field 3 of proc(5)), or None when the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return raw[raw.rindex(")") + 2:].split()


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    fields = stat_fields(pid)
    return fields is not None and fields[0] != "Z"


def children(pid: int) -> list[int]:
    """The live child processes of `pid`, oldest first."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = stat_fields(int(entry))
            if fields and fields[0] != "Z" and int(fields[1]) == pid:
                found.append((int(fields[19]), int(entry)))  # starttime, pid
    return [p for _, p in sorted(found)]


def cmdline(pid: int) -> str:
    """A process's command line ("" when it is gone)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def comm(pid: int) -> str:
    """A process's name (/proc/PID/comm: the executable's, or what the process set), "" when it is gone."""
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return ""


def niceness(pid: int | None) -> int | None:
    """A process's nice value, or None when there is no such process (None given: none; a job worker ends after
    each task)."""
    fields = stat_fields(pid) if pid is not None else None
    return int(fields[16]) if fields else None  # field 19 of proc(5)


def cpu_seconds(pid: int) -> float | None:
    """User plus system CPU time of a process so far (its threads included), or None when it is gone."""
    fields = stat_fields(pid)
    return None if fields is None else (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def rss_kib(pid: int) -> int | None:
    """A process's resident memory in KiB, or None when it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        return None
    return None
