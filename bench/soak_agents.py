"""The soak's load (bench/soak.py): agents, each a thread with its own whisper session looping over the route mix
against the server over loopback and recording each answer's latency and status, and the sleep cycle queued from
the jobs screen."""

from __future__ import annotations

import http.client
import json
import random
import threading
import time
from collections import defaultdict

from bench._common import Memory
from bench.serve_tree import cycle_runs, ui_session
from bench.soak_calls import RouteCalls
from bench.soak_report import MIX

OK = {200, 201}


# ---------------------------------------------------------------------------
# Agents
# ---------------------------------------------------------------------------

class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.ended: dict[str, list[float]] = defaultdict(list)  # time.monotonic() at each answer, beside latency
        self.errors: dict[str, int] = defaultdict(int)
        self.samples: list[str] = []
        self.error_times: list[float] = []
        self.measuring = False
        self.t0 = 0.0
        self.answered: set[str] = set()  # routes that have answered once (the warm-up waits for all of them)

    def record(self, route: str, seconds: float, status: int | None, detail: str = "") -> None:
        if status is not None:
            self.answered.add(route)
        if not self.measuring:
            return
        with self.lock:
            self.latency[route].append(seconds)
            self.ended[route].append(time.monotonic())
            if status not in OK:
                self.errors[route] += 1
                self.error_times.append(round(time.monotonic() - self.t0, 1))
                if len(self.samples) < 10:
                    self.samples.append(f"{route}: {status} {detail[:200]}")


class Agent(threading.Thread, RouteCalls):
    """One agent: a whisper session, a closed loop over the mix, a connection per request or one kept alive."""

    def __init__(self, index: int, port: int, token: str, memories: list[Memory], fresh: list[Memory],
                 stats: Stats, stop: threading.Event, seed: int, mix: tuple = MIX,
                 fresh_connections: bool = False) -> None:
        super().__init__(daemon=True)
        self.mix, self.fresh_connections = mix, fresh_connections
        self.index, self.port, self.token = index, port, token
        self.memories, self.fresh = memories, fresh
        self.stats, self.stop = stats, stop
        self.rng = random.Random(seed)
        self.conn: http.client.HTTPConnection | None = None
        self.ports: set[int] = set()  # the local ports of its kept connections (bench/soak_workers.py)
        self.last_ids: list[str] = []
        self.last_log: int | None = None
        self.session = f"soak-agent-{index}"
        self.label, self.source = f"agent {index}", f"soak-{index}"

    def _call(self, route: str, path: str, body: dict) -> dict | None:
        started = time.perf_counter()
        status, detail, answer = None, "", None
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
            if self.fresh_connections:
                headers["Connection"] = "close"  # as urllib sends it (the hook, the CLI)
            self.conn.request("POST", path, body=json.dumps(body), headers=headers)
            if not self.fresh_connections:
                self.ports.add(self.conn.sock.getsockname()[1])
            response = self.conn.getresponse()
            raw = response.read()
            status = response.status
            if self.fresh_connections:
                self.conn.close()
                self.conn = None
            answer = json.loads(raw) if raw else None
            if status not in OK:
                detail = raw[:200].decode(errors="replace")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            detail = f"{type(exc).__name__}: {exc}"
            if self.conn is not None:
                self.conn.close()
            self.conn = None
        self.stats.record(route, time.perf_counter() - started, status, detail)
        return answer if status in OK else None

    def run(self) -> None:
        routes, weights = zip(*self.mix)
        n = 0
        while not self.stop.is_set():
            n += 1
            self.step(self.rng.choices(routes, weights)[0], n)


# ---------------------------------------------------------------------------
# The sleep cycle, queued from the jobs screen
# ---------------------------------------------------------------------------

def cycle_loop(port: int, token: str, password: str, every: float, stop: threading.Event, log: list) -> None:
    """Queue the sleep cycle every `every` seconds unless the last one queued has not finished."""
    ui = ui_session(port, password)
    pending_since = None
    while not stop.wait(0 if pending_since is None else 1.0):
        try:
            finished = len(cycle_runs(port, token))
        except (OSError, http.client.HTTPException, ValueError):
            continue  # the server did not answer in time: try again (the agents count their own errors)
        if pending_since is not None and finished > len([e for e in log if e["done"]]):
            log[-1]["done"] = time.monotonic()
            pending_since = None
        if pending_since is None and (not log or time.monotonic() - log[-1]["queued"] >= every):
            answer = ui.post("/jobs/sleep-cycle/")
            log.append({"queued": time.monotonic(), "done": None, "status": answer.status_code})
            pending_since = log[-1]["queued"]
    ui.close()
