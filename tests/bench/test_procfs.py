"""bench.procfs: the /proc readers the serve benches and the fault suite share, on a real child process."""

from __future__ import annotations

import os
import subprocess

from bench import procfs


def test_a_live_child_is_read_and_a_reaped_one_answers_nothing():
    proc = subprocess.Popen(["sleep", "30"])
    try:
        assert proc.pid in procfs.children(os.getpid())
        assert (procfs.alive(proc.pid), procfs.comm(proc.pid), procfs.cmdline(proc.pid)) == (True, "sleep", "sleep 30 ")
        assert procfs.niceness(proc.pid) == os.getpriority(os.PRIO_PROCESS, proc.pid)
        assert procfs.rss_kib(proc.pid) > 0
        assert procfs.cpu_seconds(proc.pid) >= 0.0
    finally:
        proc.kill()
        proc.wait()
    assert proc.pid not in procfs.children(os.getpid())
    assert (procfs.alive(proc.pid), procfs.comm(proc.pid), procfs.cmdline(proc.pid)) == (False, "", "")
    assert (procfs.niceness(proc.pid), procfs.rss_kib(proc.pid), procfs.cpu_seconds(proc.pid)) == (None, None, None)


def test_no_pid_has_no_niceness():
    assert procfs.niceness(None) is None
