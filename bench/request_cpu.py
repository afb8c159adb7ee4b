"""CPU and SQL statements per request of the soak's routes, in process, on the soak's store.

    python -m bench.request_cpu [--memories 2000] [--requests 40] [--identity 0] [--profile ROUTE] [--top 30]

A fresh temporary home gets `--memories` generated memories (bench/_common.py corpus, as bench/soak.py writes
them) and `ormah init`; then this process sets Django up on it the way a served web worker runs (one thread for
numpy and onnxruntime) and sends the soak's requests through Django's test client (middleware, auth, ninja, the
route, the connection closed at the end of each request as in the server): remember, recall, whisper (each with a
session) and feedback, and `whisper_task`: a request-shaped whisper prompt ("Please write ..."), which loads the
identity set (the memories the self node defines: `--identity N` remembers N of them, about_self, before the
warm-up; the soak's store has none). Per route it reports the SQL statements per request (counted on the connection, the write
statements apart) and the process CPU per request (a second pass, not counting statements), p50 and mean.
`--profile ROUTE` prints cProfile's top functions for that route (process CPU time, not wall time).
`--home DIR` starts from a copy of a home `bench.serve_cpu --keep` printed. `--mix N` then sends N requests drawn at
random in the soak's shares (bench/soak_report.py MIX: a remember between reads, as in the soak, moves the store state
the read caches are kept for, which the per-route passes, a route at a time, never do) and reports the CPU per request
by route and over the mix; `--profile mix` profiles that pass. A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# as `ormah serve` runs its web worker: one thread per numpy and onnxruntime call (set before numpy loads)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ORMAH_EMBEDDING_THREADS", "1")

from bench._common import REPO, corpus  # noqa: E402
from bench.serve_tree import serve_env, write_memories  # noqa: E402
from bench.soak_calls import RouteCalls  # noqa: E402
from bench.soak_report import MIX  # noqa: E402

ROUTES = ("remember", "recall", "whisper", "feedback", "whisper_task")
# Django captures an executemany as "N times: INSERT ...": one statement sent, counted once (a bulk_create is one
# multi-row INSERT per batch, captured as it is)
WRITES = re.compile(r"^\s*(?:\d+ times: )?(INSERT|UPDATE|DELETE|REPLACE|BEGIN|SAVEPOINT|COMMIT|RELEASE)", re.IGNORECASE)


class Agent(RouteCalls):
    """The soak's agent (bench/soak_calls.py), one request at a time through Django's test client."""

    def __init__(self, client, token: str, memories, fresh, seed: int = 7) -> None:
        self.client, self.token = client, token
        self.memories, self.fresh = memories, fresh
        self.rng = random.Random(seed)
        self.n = 0
        self.index, self.label, self.source = 0, "cpu bench", "cpu-bench"
        self.last_ids: list[str] = []
        self.last_log: int | None = None
        self.session = "cpu-agent"

    def _call(self, route: str, path: str, body: dict) -> dict:
        response = self.client.post(path, data=json.dumps(body), content_type="application/json",
                                    HTTP_AUTHORIZATION=f"Bearer {self.token}")
        if response.status_code not in (200, 201):
            raise RuntimeError(f"{path}: {response.status_code} {response.content[:200]!r}")
        return response.json()

    def call(self, route: str) -> None:
        self.n += 1
        if route == "whisper_task":  # a task a preference may shape: whisper loads the identity set for it
            self._call(route, "/api/agent/whisper", {"prompt": f"Please write a short note on {self._query()}",
                                                     "session_id": self.session})
            return
        self.step(route, self.n)

    def about_user(self, n: int) -> None:
        """Remember `n` memories about the user (the self node defines each), from the memories not stored."""
        for m in self.fresh[-n:] if n else []:
            self._call("remember", "/api/agent/remember", {
                "content": f"About me: {m.content}", "type": "preference", "title": m.title, "about_self": True,
                "source": f"agent:{self.source}"})


def setup(memories: int, kept: str | None = None) -> tuple[Path, list, list]:
    root = Path(tempfile.mkdtemp(prefix="ormah-request-cpu-"))
    home = root / "home"
    everything = corpus(memories + 2000, seed=1)
    stored, fresh = everything[:memories], everything[memories:]
    os.environ.setdefault("ORMAH_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ormah-models"))
    if kept:  # a copy of a home bench.serve_cpu --keep left (the same store without indexing it again)
        shutil.copytree(Path(kept) / "home", home, symlinks=True)
    else:
        write_memories(home, stored)
        subprocess.run([sys.executable, str(REPO / "manage.py"), "init", "--name", "CPU", "--quiet"],
                       env=serve_env(home), check=True, stdout=subprocess.DEVNULL)
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_SECRET_KEY"):
        os.environ.pop(key, None)
    os.environ.update({"ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
                       "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_API_TOKEN": "", "ORMAH_LLM_PROVIDER": "none"})
    import django

    django.setup()
    return home, stored, fresh


def count_statements(agent: Agent, route: str, n: int) -> tuple[list[int], list[int], list[str]]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    totals, writes, sample = [], [], []
    for _ in range(n):
        with CaptureQueriesContext(connection) as ctx:
            agent.call(route)
        sqls = [q["sql"] for q in ctx.captured_queries]
        totals.append(len(sqls))
        writes.append(sum(1 for s in sqls if WRITES.match(s)))
        sample = sqls
    return totals, writes, sample


def cpu_per_request(agent: Agent, route: str, n: int) -> list[float]:
    out = []
    for _ in range(n):
        started = time.process_time()
        agent.call(route)
        out.append((time.process_time() - started) * 1000)
    return out


def mix_cpu(agent: Agent, n: int) -> None:
    """`n` requests of the soak's mix, one at a time: the process CPU of each, by route and in all."""
    routes, weights = zip(*MIX)
    rng = random.Random(11)
    by_route: dict[str, list[float]] = {}
    for _ in range(n):
        route = rng.choices(routes, weights)[0]
        started = time.process_time()
        agent.call(route)
        by_route.setdefault(route, []).append((time.process_time() - started) * 1000)
    every = [ms for cpu in by_route.values() for ms in cpu]
    print(f"mix of {n}: " + "; ".join(f"{route} {len(cpu)} x {statistics.mean(cpu):.1f}"
                                      for route, cpu in sorted(by_route.items()))
          + f"; all {statistics.mean(every):.2f} ms CPU a request")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=40, help="requests per route and pass")
    parser.add_argument("--identity", type=int, default=0, help="memories about the user to remember first")
    parser.add_argument("--profile", choices=(*ROUTES, "mix"), action="append", default=[])
    parser.add_argument("--mix", type=int, default=0, help="requests of the soak's mix, after the per-route passes")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--show-sql", choices=ROUTES, action="append", default=[])
    parser.add_argument("--home", help="start from a copy of the folder a `bench.serve_cpu --keep` run printed")
    args = parser.parse_args(argv)
    home, stored, fresh = setup(args.memories, args.home)
    try:
        return run(args, home, stored, fresh)
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def run(args: argparse.Namespace, home: Path, stored: list, fresh: list) -> int:
    from django.test import Client

    token = (home / "api_token").read_text().strip()
    agent = Agent(Client(), token, stored, fresh)
    agent.about_user(args.identity)
    for _ in range(3):  # warm-up: the model, the scorer, the URL conf, the matrix
        for route in ROUTES:
            agent.call(route)
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f}; {args.memories} memories, "
          f"{args.identity} about the user; {args.requests} requests per route and pass")
    print("| route | statements p50 / mean / max | writes mean | CPU ms p50 / mean |")
    print("|---|---|---:|---|")
    for route in ROUTES:
        totals, writes, sample = count_statements(agent, route, args.requests)
        cpu = cpu_per_request(agent, route, args.requests)
        print(f"| {route} | {statistics.median(totals):.0f} / {statistics.mean(totals):.1f} / {max(totals)} | "
              f"{statistics.mean(writes):.1f} | {statistics.median(cpu):.1f} / {statistics.mean(cpu):.1f} |")
        if route in args.show_sql:
            for sql in sample:
                print("   ", sql[:160])
    if args.mix:
        mix_cpu(agent, args.mix)
    for route in args.profile:
        profiler = cProfile.Profile(time.process_time)  # CPU, not wall: an fsync's wait is not the process's work
        profiler.enable()
        if route == "mix":
            mix_cpu(agent, args.mix or args.requests)
        else:
            for _ in range(args.requests):
                agent.call(route)
        profiler.disable()
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).sort_stats("tottime")
        stats.print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(r"/(whisper|memory|ormah_site)/", args.top)
        print(f"\n## profile: {route} x {args.requests}\n{out.getvalue()}")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
