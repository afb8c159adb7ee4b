"""The serve supervisor (issue 12 defect 4, docs/security.md claim 12): kill each process of the serve tree in turn
under HTTP load; the API answers again within 10 s and the part comes back; no process outlives a SIGKILLed
supervisor, and a dead job cluster never takes the API down."""

from __future__ import annotations

import os
import threading
import time

import pytest

from pathlib import Path

from tests.faults.support import Api, alive, children, cmdline, index_count, kill, niceness, ui_client, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.slow]

# 10 s on an idle machine (issue 12), stretched by how many runnable processes share each core right now: a cold
# gunicorn start is ~2.5 s of CPU, which took 18 s of wall time at a load of 13 on the 2 shared cores.
def api_back_seconds() -> float:
    return 10 * max(1.0, os.getloadavg()[0] / (os.cpu_count() or 1))
ROLES = ["web master", "web worker", "cluster main", "job worker", "cluster sentinel"]


class Load:
    """A thread calling an authenticated read every 50 ms, recording (time, status)."""

    def __init__(self, api: Api) -> None:
        self.api, self.calls, self.stop = api, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                status, _ = self.api.call("GET", "/api/agent/nodes?limit=1", timeout=5)
            except OSError:
                status = None
            self.calls.append((time.monotonic(), status))
            time.sleep(0.05)

    def answered_since(self, moment: float) -> bool:
        return any(t > moment and s == 200 for t, s in list(self.calls))

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def _roles(server) -> dict:
    main = server.cluster()
    sentinel = children(main)[0] if main and children(main) else None
    return {"web worker": (server.web_workers() or [None])[0], "web master": server.web_master(),
            "cluster main": main, "cluster sentinel": sentinel, "job worker": server.job_worker()}


def test_each_process_of_the_tree_is_restarted_while_the_api_keeps_answering(fault_home, serve):
    server = serve(fault_home)
    load = Load(Api(server.port, server.token))
    try:
        assert wait_until(lambda: load.answered_since(0), 30)
        for role in ROLES:
            pid = wait_until(lambda: _roles(server)[role], 30)  # none between two job workers (recycle 1)
            assert pid is not None, f"no {role}: {[cmdline(p) for p in server.tree()]}"
            kill(pid)
            killed_at, bound = time.monotonic(), api_back_seconds()
            assert wait_until(lambda: load.answered_since(killed_at), bound), (
                f"the API did not answer within {bound:.0f} s after the {role} was killed: "
                f"{server.log_path.read_text()[-3000:]}")
            assert wait_until(lambda: server.web_workers() and server.job_worker() not in (None, pid)
                              and _roles(server)[role] not in (None, pid), 60), f"the {role} did not come back"
            assert alive(server.proc.pid)
    finally:
        load.finish()
    assert load.answered_since(0)


def test_no_process_outlives_a_sigkilled_supervisor(fault_home, serve):
    server = serve(fault_home)
    tree = server.tree()
    assert len(tree) >= 5, [cmdline(p) for p in tree]  # supervisor, gunicorn master + worker, cluster + children
    kill(server.proc.pid)
    assert wait_until(lambda: not server.tree(), 60), [cmdline(p) for p in server.tree()]


def open_files(pid: int) -> list[str]:
    found = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            found.append(os.readlink(fd))
        except OSError:
            continue  # closed meanwhile
    return found


def job_worker_niceness(server, base: int, *, not_pid: int | None = None) -> tuple[int, int] | None:
    """(pid, niceness above base) of the job worker of this moment, other than not_pid; None while there is none:
    each task ends its worker (recycle 1) and the scheduled index_updater runs every minute, so the pid and its
    niceness are read together, and read again when the worker vanished in between."""
    pid = server.job_worker()
    nice = niceness(pid) if pid not in (None, not_pid) else None
    return None if nice is None else (pid, nice - base)


def test_the_job_worker_runs_niced_and_a_fresh_one_follows_each_task(fault_home, serve):
    server = serve(fault_home)
    base = niceness(server.proc.pid)  # relative: the suite itself may run niced
    first = wait_until(lambda: job_worker_niceness(server, base), 60)
    assert first and first[1] == 10, first
    assert niceness(server.web_workers()[0]) - base == 0
    assert ui_client(server).post("/jobs/decay_manager/run/").status_code == 302
    finished = "SELECT count(*) FROM maintenance_jobrunrow WHERE trigger = 'ui' AND finished_at IS NOT NULL"
    assert wait_until(lambda: index_count(server.home, finished) == 1, 120), server.log_path.read_text()[-3000:]
    replaced = wait_until(lambda: job_worker_niceness(server, base, not_pid=first[0]), 60)
    assert replaced, "the job worker was not replaced"
    assert replaced[1] == 10, replaced


def test_each_web_worker_reports_alive_through_a_file_on_a_tmpfs(fault_home, serve):
    server = serve(fault_home)
    for worker in server.web_workers():
        beats = [path for path in open_files(worker) if "/wgunicorn-" in path]  # gunicorn's heartbeat, unlinked
        assert beats and all(path.startswith("/dev/shm/") for path in beats), beats
