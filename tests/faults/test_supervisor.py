"""The serve supervisor (issue 12 defect 4, docs/security.md claim 12): kill each process of the serve tree in turn
under HTTP load; the API answers again within 10 s and the part comes back; no process outlives a SIGKILLed
supervisor, and a dead job cluster never takes the API down."""

from __future__ import annotations

import os
import threading
import time

import pytest

from tests.faults.support import Api, alive, children, cmdline, kill, wait_until

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
            pid = _roles(server)[role]
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
    assert wait_until(lambda: not server.tree(), 10), [cmdline(p) for p in server.tree()]
