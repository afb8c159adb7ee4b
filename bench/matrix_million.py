"""What the in-process vector matrix costs at a million memories (issue 13 item 1), measured on synthetic vectors.

    python -m bench.matrix_million [--rows 1000000] [--queries 30]

No database: a million random unit vectors (384 float32, the MiniLM dimension) straight into the same
`memory.search.matrix.Matrix` the vector leg uses, then exact top-30 queries through `Matrix.top` with no
filter, with a type filter keeping about 10 %, and with the default outdated filter (`active_at`). Reports the
resident size of the arrays, the time to append them, and wall and CPU per query, next to the process's peak RSS.
Loading from SQLite is not included: bench.recall_latency measures a cold load at 100k (scale it linearly).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from datetime import UTC, datetime

import numpy as np

DIM = 384


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=30)
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings_test")
    import django

    django.setup()
    from memory.search.filters import Filters
    from memory.search.matrix import Matrix

    rng = np.random.default_rng(7)
    matrix = Matrix(DIM, 0)
    types = ["fact", "decision", "preference", "event", "person", "project", "concept", "procedure", "goal",
             "observation"]
    started, cpu = time.perf_counter(), time.process_time()
    batch = 50_000
    for lo in range(0, args.rows, batch):
        n = min(batch, args.rows - lo)
        vecs = rng.standard_normal((n, DIM), dtype=np.float32)
        rows = [(lo + i + 1, types[(lo + i) % 10], "working", None, "2026-01-01 00:00:00", None, vecs[i], 0)
                for i in range(n)]
        matrix.add(rows)
    append_s, append_cpu = time.perf_counter() - started, time.process_time() - cpu
    now = datetime(2026, 11, 1, tzinfo=UTC)
    results = {}
    for label, filters in (("no filter", Filters()), ("active_at (default)", Filters(active_at=now)),
                           ("type = 1 of 10", Filters(types=("goal",)))):
        walls, cpus = [], []
        for _ in range(args.queries):
            q = rng.standard_normal(DIM).astype(np.float32)
            q /= np.linalg.norm(q)
            t, c = time.perf_counter(), time.process_time()
            matrix.top(q, 30, matrix.mask(filters))
            walls.append((time.perf_counter() - t) * 1000)
            cpus.append((time.process_time() - c) * 1000)
        results[label] = (np.percentile(walls, 50), np.percentile(walls, 95), np.percentile(cpus, 50))
    arrays = sum(getattr(matrix, name).nbytes for name in
                 ("ids", "part", "vecs", "alive", "type_c", "tier_c", "space_c", "created", "valid_until"))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows {args.rows:,}; arrays {arrays / 2**20:.0f} MiB (capacity {matrix.cap:,}); vectors alone "
          f"{args.rows * DIM * 4 / 2**20:.0f} MiB float32, {args.rows * DIM / 2**20:.0f} MiB int8; peak RSS "
          f"{peak:.0f} MiB; append {append_s:.1f} s wall / {append_cpu:.1f} s CPU; load avg {os.getloadavg()[0]:.1f}")
    for label, (p50, p95, cpu50) in results.items():
        print(f"  {label}: p50 {p50:.0f} ms, p95 {p95:.0f} ms wall, CPU p50 {cpu50:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
