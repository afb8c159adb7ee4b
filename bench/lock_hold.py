"""How long a remember holds the write lock, and how much of the hold is fsync, in process, on the soak's store.

    python -m bench.lock_hold --home DIR [--remembers 60] [--threads 1 4 8] [--route remember|confirm] [--json]

`--home DIR`: a folder a `bench.serve_cpu --keep` run (or `--make DIR`, which writes 2,000 generated memories and
runs `ormah init` there once) left; each run works on a copy of it. This process sets Django up as a served web
worker runs it and sends the soak's remember requests (bench/soak_calls.py) through Django's test client, one
agent per thread. Every hold of the write lock (memory.writes's `write_lock`, outermost only) is timed in wall time,
and every `os.fsync` is timed and counted as under the lock or before it. Reports per thread count: holds, the
hold p50 / p95 / mean (ms), fsyncs per remember under the lock and before it, the fsync time inside the holds, the
remember's wall time p50 / p95. A benchmark, not a test: nothing asserts. Old and new code are compared by running
it alternately from two checkouts (the figures in docs/benchmarks.md say which).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ORMAH_EMBEDDING_THREADS", "1")


from bench import request_cpu  # noqa: E402  (after the thread settings above)


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", help="a kept home (bench.serve_cpu --keep, or --make)")
    parser.add_argument("--make", help="write the 2,000-memory store into this new folder and stop")
    parser.add_argument("--remembers", type=int, default=60)
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 4, 8])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--route", choices=("remember", "confirm"), default="remember",
                        help="confirm: confirmed uses (positive feedback's write, memory.services.lifecycle) of "
                             "random stored memories, called in each thread, instead of remembers")
    args = parser.parse_args(argv)
    if args.make:
        home, _, _ = request_cpu.setup(2000)
        shutil.copytree(home, Path(args.make) / "home", symlinks=True)
        shutil.rmtree(home.parent, ignore_errors=True)
        print(f"kept {args.make}")
        return 0
    home, stored, fresh = request_cpu.setup(2000, args.home)
    try:
        return _run(args, home, stored, fresh)
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)


def _run(args, home: Path, stored, fresh) -> int:
    from django.db import connection
    from django.test import Client

    import memory.writes as writes
    from memory import locking

    holds: list[tuple[float, float]] = []  # (hold ms, fsync ms inside it)
    fsyncs = {"under": 0, "before": 0}
    local = threading.local()
    holding = [0]
    real_lock, real_fsync = writes.write_lock, os.fsync

    @contextmanager
    def timed_lock(lock_file):
        outer = not locking.held()
        with real_lock(lock_file):
            if not outer:
                yield
                return
            local.fsync_ms = 0.0
            started = time.perf_counter()
            holding[0] += 1
            try:
                yield
            finally:
                holding[0] -= 1
                holds.append(((time.perf_counter() - started) * 1000, local.fsync_ms))

    def timed_fsync(fd):
        started = time.perf_counter()
        try:
            return real_fsync(fd)
        finally:
            if locking.held() or (holding[0] and threading.current_thread().name.startswith("ThreadPoolExecutor")):
                fsyncs["under"] += 1  # the holder's own, or its pool's (memory.nameless writes a batch's files so)
                local.fsync_ms = getattr(local, "fsync_ms", 0.0) + (time.perf_counter() - started) * 1000
            else:
                fsyncs["before"] += 1

    writes.write_lock = timed_lock
    os.fsync = timed_fsync
    token = (home / "api_token").read_text().strip()
    from memory.models import NodeRow
    from memory.services.lifecycle import node_confirm_use

    uids = sorted(NodeRow.objects.values_list("uid", flat=True))
    connection.close()
    results = []
    try:
        warm = request_cpu.Agent(Client(), token, stored, fresh, seed=1)
        for route in ("remember", "recall", "remember"):
            warm.call(route)
        for threads in args.threads:
            holds.clear()
            fsyncs.update(under=0, before=0)
            walls: list[float] = []
            per = max(1, args.remembers // threads)
            load = os.getloadavg()[0]
            cpu0 = time.process_time()

            def agent(i: int) -> None:
                a = request_cpu.Agent(Client(), token, stored, fresh, seed=10 + i)
                a.index, a.session = 100 + threads * 10 + i, f"hold-{threads}-{i}"
                pick = random.Random(threads * 100 + i)
                try:
                    for _ in range(per):
                        started = time.perf_counter()
                        if args.route == "confirm":
                            node_confirm_use(ref=pick.choice(uids), source="feedback")
                        else:
                            a.step("remember", a.n + 1)
                        a.n += 1
                        walls.append((time.perf_counter() - started) * 1000)
                finally:
                    connection.close()

            pool = [threading.Thread(target=agent, args=(i,)) for i in range(threads)]
            for t in pool:
                t.start()
            for t in pool:
                t.join()
            n = per * threads
            hold = [h for h, _ in holds]
            row = {"threads": threads, "remembers": n, "holds": len(holds), "load": round(load, 2),
                   "cpu_s": round(time.process_time() - cpu0, 2),
                   "hold_p50": _pct(hold, 0.5), "hold_p95": _pct(hold, 0.95), "hold_mean": statistics.mean(hold),
                   "fsync_in_hold_p50": _pct([f for _, f in holds], 0.5),
                   "fsyncs_under_per_remember": fsyncs["under"] / n, "fsyncs_before_per_remember": fsyncs["before"] / n,
                   "lock_ms_per_remember": sum(hold) / n,
                   "wall_p50": _pct(walls, 0.5), "wall_p95": _pct(walls, 0.95)}
            results.append(row)
            if not args.json:
                print(f"{threads} thr: {n} remembers, {len(holds)} holds, load {load:.2f}, cpu {row['cpu_s']} s | "
                      f"hold p50 {row['hold_p50']:.1f} p95 {row['hold_p95']:.1f} mean {row['hold_mean']:.1f} ms, "
                      f"fsync in hold p50 {row['fsync_in_hold_p50']:.1f} | fsyncs/remember under "
                      f"{row['fsyncs_under_per_remember']:.2f} before {row['fsyncs_before_per_remember']:.2f} | "
                      f"lock ms/remember {row['lock_ms_per_remember']:.1f} | wall p50 {row['wall_p50']:.0f} "
                      f"p95 {row['wall_p95']:.0f}", flush=True)
    finally:
        writes.write_lock = real_lock
        os.fsync = real_fsync
    if args.json:
        json.dump(results, sys.stdout)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
