"""Recall latency: warm `memory.search.recall` p50/p95 over 50 queries on synthetic stores of 1k, 10k, 100k nodes.

    python -m bench.recall_latency [--sizes 1000,10000,100000] [--queries 50] [--write] [--database-url URL]

Each size runs in its own child process with a fresh temporary ORMAH_HOME (file database, migrated); with
`--database-url postgres://...` on a fresh PostgreSQL database of that server instead (bench/pg.py; the same
store, queries and floor; "pgvector" is then the engine's vector-table leg where SQLite has vec0).

How the store is built, for speed: realistic generated sentences (a topic such as "invoice generator", tools,
people, projects, symptoms, fixes; titles, tags, spaces, dates over two years, 3 % outdated, 20 % with typed
connections) go straight into the index through `memory.index.index_nodes`, with no markdown files and no
model: a stand-in embedder gives every memory a random unit vector near its topic's random centroid (cosine to
same-topic memories around 0.4, to others around 0). The query side is the real thing: `recall` with the
real offline MiniLM embedder computing every query vector (its time is included), whose output is then swapped
for a vector near the query's topic so the KNN leg sees realistic neighbourhoods (a full candidate pool).
Queries mix keywords, questions, a current project (space scoring) and "last week" windows.

Each store is measured twice: with the connection as ormah_site's backend opens it, then with
`PRAGMA mmap_size = 1 GiB` and `PRAGMA cache_size = 256 MiB` set on it. vec0 scans every vector chunk (a 1.5 MB
blob per 1,024 vectors) on each KNN; through the default 2 MB page cache that is one read call per 4 KiB page.

Each store is measured with the vec0 vector leg (before) and the in-process matrix (after) in the same process,
next to the floor: one query embedding plus an exact numpy scan of the same vectors (issue 13).

Targets: p95 <= 25 ms at 10k and <= 80 ms at 100k on an idle machine, else p95 <= 3x the floor. `--write` replaces its marked block in the "Recall latency" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._common import write_block
from bench.recall.synthetic import NOW, TimedQueryEmbedder, TopicEmbedder, generate, queries
from bench.recall_stages import stage_rows, time_stages

REPO = Path(__file__).resolve().parent.parent
BENCH_DOC = REPO / "docs" / "benchmarks.md"
TARGETS_MS = {10_000: 25.0, 100_000: 80.0}

# ---------------------------------------------------------------------------
# Child: one size in one fresh home
# ---------------------------------------------------------------------------

def _django(home: Path) -> None:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ.pop("ORMAH_DB_PATH", None)  # ORMAH_DATABASE_URL (a fresh database per size) comes from the parent
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


TUNING = ("PRAGMA mmap_size = 1073741824", "PRAGMA cache_size = -262144")  # 1 GiB map, 256 MiB page cache


def _measure(qs, emb, real) -> dict:
    from django.db import connection

    from bench.pg import server_cpu
    from memory.search import recall

    for q in qs[:5]:
        recall(query=q, now=NOW, embedder=emb)
    getattr(real, "_queries", {}).clear()  # every measured query pays its embedding (no LRU hit)
    times, cpu, embed_ms = [], [], []
    server = server_cpu(connection)  # PostgreSQL's own process: not in this process's CPU time
    server_started = server()
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        recall(query=q, now=NOW, embedder=emb)
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    server_ms = (server() - server_started) * 1000 / len(qs)
    for q in qs[:20]:
        t = time.perf_counter()
        real.embed_documents([q.query])  # not embed_query: its LRU has these queries by now
        embed_ms.append((time.perf_counter() - t) * 1000)
    arr = np.asarray(times)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "max": float(arr.max()),
            "mean": float(arr.mean()), "embed_p50": float(np.percentile(embed_ms, 50)),
            "cpu_p50": float(np.percentile(cpu, 50)), "cpu_p95": float(np.percentile(cpu, 95)),
            "cpu_mean": float(np.mean(cpu)), "server_cpu_mean": server_ms, "load": os.getloadavg()[0]}


def _floor(qs, real, k: int = 30) -> dict:
    """The hardware floor of one recall: one query embedding (no LRU) plus an exact numpy scan of every vector."""
    from memory.search import vectors
    from memory.search.matrix import scan

    stored = vectors.all_vectors()
    matrix = np.stack([np.frombuffer(blob, dtype=np.float32) for _, blob in stored])
    times, cpu = [], []
    for q in qs:
        t, c = time.perf_counter(), time.process_time()
        v = real.embed_documents([q.query])[0]
        scores = scan(matrix, v)  # the matrix leg's own scan (one core, no BLAS threads: docs/vectors.md)
        np.argpartition(-scores, min(k, len(scores) - 1))[:k]
        times.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return {"floor_p50": float(np.percentile(times, 50)), "floor_p95": float(np.percentile(times, 95)),
            "floor_cpu_p50": float(np.percentile(cpu, 50)), "floor_cpu_p95": float(np.percentile(cpu, 95))}


def _matrix_load() -> dict:
    """Wall and CPU time of a cold full load of the in-process matrix, and its size."""
    from memory.search import matrix

    matrix.reset()
    t, c = time.perf_counter(), time.process_time()
    [(state, _)] = matrix.current()
    return {"matrix_load_s": time.perf_counter() - t, "matrix_load_cpu_s": time.process_time() - c,
            "matrix_mb": state.vecs[:state.n].nbytes / 2**20}


def child(size: int, count: int, home: Path, tuned: bool) -> list[dict]:
    """Build one store, then measure recall with the vec0 vector leg (before) and the in-process matrix (after),
    the floor in the same process (and the tuning pragmas when asked)."""
    _django(home)
    from django.db import connection, transaction

    from memory import index, runtime
    from memory.store import StoredFile

    store = runtime.store()
    docs = TopicEmbedder()
    nodes = generate(size)
    started = time.perf_counter()
    chunk = 1000
    for i in range(0, size, chunk):
        part = nodes[i:i + chunk]
        pairs = [(n, StoredFile(path=store.root / "nodes" / f"bench-{n.id}.md", hash=n.id, mtime_ns=0, size=0))
                 for n in part]
        with transaction.atomic():
            index.index_nodes(store, pairs, embedder=docs, link=i + chunk >= size)
    built = time.perf_counter() - started
    real = runtime.embedder()
    real.embed_query("warm up")
    emb = TimedQueryEmbedder(real, docs)
    qs = queries(nodes, count)
    from memory.backends import backend as engine

    info = engine().engine_info()
    on_postgres = connection.vendor == "postgresql"
    facts = {"size": size, "queries": count, "build_s": round(built, 1), "engine": connection.vendor,
             "sqlite": info.get("sqlite", info.get("postgresql")), "sqlite_vec": info["vec"]}
    from django.conf import settings

    floor = _floor(qs, real)
    results = []
    for backend in ("vec0", "matrix"):  # "vec0": the engine's vector table (vec0 on SQLite, pgvector on PostgreSQL)
        settings.ORMAH = {**settings.ORMAH, "VECTOR_INDEX": backend}
        extra = _matrix_load() if backend == "matrix" else {}
        label = "pgvector" if on_postgres and backend == "vec0" else backend
        measured = _measure(qs, emb, real)
        stages, calls = time_stages(qs, emb, real)
        results.append({**facts, **floor, **extra, "backend": label, "tuned": False, **measured,
                        "stages": stages, "stage_calls": calls})
    if tuned and not on_postgres:  # the pragmas are SQLite's
        with connection.cursor() as cur:
            for pragma in TUNING:
                cur.execute(pragma)
        results.append({**facts, **floor, "backend": "matrix", "tuned": True, **_measure(qs, emb, real)})
    return results


# ---------------------------------------------------------------------------
# Parent: children, table, docs section
# ---------------------------------------------------------------------------

def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
        mem = next(int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal"))
        ram = f"{mem / 1024 / 1024:.0f} GiB"
    except (OSError, StopIteration):
        ram = "?"
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpus} cores {cpu}, {ram} RAM, {platform.system()} {platform.release()}, Python " \
           f"{platform.python_version()}"


def engine_line(result: dict) -> str:
    """The engine and vector extension versions a child reported."""
    if result.get("engine") == "postgresql":
        return f"PostgreSQL {result['sqlite']}, pgvector {result['sqlite_vec']}"
    return f"SQLite {result['sqlite']}, sqlite-vec {result['sqlite_vec']}"


def render(results: list[dict], machine: str) -> str:
    lines = [
        f"`python -m bench.recall_latency` — machine: {machine}; {engine_line(results[0])}. Warm "
        f"`memory.search.recall` (limit 10, activation on), {results[0]['queries']} "
        "queries per size after 5 warm-up queries: keywords, questions, a current project and \"last week\" "
        "windows. Wall-clock percentiles are what a caller waits; CPU is this process's CPU time per recall "
        "(onnxruntime threads included), which a busy machine inflates less; load avg is the 1-minute load when "
        "the size finished. The store is synthetic and built straight through `memory.index.index_nodes` with "
        "stand-in "
        "topic vectors (no files, no model); each query is embedded by the real MiniLM, whose time is included "
        "(see the module docstring).",
        "",
        "| nodes | vector leg | connection | p50 ms | p95 ms | max ms | CPU p50 / p95 ms | floor p95 ms (CPU) | "
        "p95 / floor | load avg | target p95 | build s |",
        "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        target = TARGETS_MS.get(r["size"])
        mark = "—" if target is None else f"≤ {target:.0f} {'✓' if r['p95'] <= target else '✗'}"
        conn = "mmap 1 GiB + 256 MiB cache" if r["tuned"] else "default"
        ratio = r["p95"] / r["floor_p95"]
        lines.append(f"| {r['size']:,} | {r['backend']} | {conn} | {r['p50']:.1f} | {r['p95']:.1f} | {r['max']:.1f} | "
                     f"{r['cpu_p50']:.1f} / {r['cpu_p95']:.1f} | {r['floor_p95']:.1f} ({r['floor_cpu_p95']:.1f}) | "
                     f"{ratio:.1f}x {'✓' if ratio <= 3 else '✗'} | {r['load']:.1f} | {mark} | {r['build_s']:.0f} |")
    loads = [r for r in results if "matrix_load_s" in r]
    if loads:
        lines += ["", "In-process matrix: cold full load (first query of a process) and size: " + "; ".join(
            f"{r['size']:,} nodes {r['matrix_load_s']:.2f} s wall / {r['matrix_load_cpu_s']:.2f} s CPU, "
            f"{r['matrix_mb']:.0f} MiB" for r in loads) + "."]
    staged = [r for r in results if r.get("stages")]
    if staged:
        lines += ["", "Where the time goes (mean wall ms per recall, default connection, a separate pass with each "
                  "stage wrapped in a timer where its caller looks it up; a row marked · is part of the row above "
                  "it, \"rest of\" is the part of it no named stage covers; — : never called by these queries):", "",
                  "| stage | " + " | ".join(f"{r['size']:,} {r['backend']}" for r in staged) + " |",
                  "|---|" + "---:|" * len(staged)]
        for name, parent in stage_rows():
            shown = f"· {name.removeprefix('rest of ')} (rest)" if name.startswith("rest of ") else \
                (f"· {name}" if parent else name)
            cells = ["—" if r.get("stage_calls", {}).get(name, 1) == 0 else f"{r['stages'].get(name, 0.0):.1f}"
                     for r in staged]
            lines.append(f"| {shown} | " + " | ".join(cells) + " |")
    lines += ["", READING.strip()]
    return "\n".join(lines)


READING = """
Reading the numbers: wall-clock times follow the machine's load (the load average column); CPU time and the ratio
to the floor are the steadier figures. The floor is one MiniLM query embedding plus an exact scan of the same
vectors with the matrix leg's own scan (memory.search.matrix.scan), measured in the same process. vec0 and the
in-process matrix run in the same process on the same store. The matrix's cold load is paid once per process
(its first query), then only deltas. The stage table is wall time from a separate pass, so load inflates it too.
"""


def run_size(size: int, *, queries: int, tuned: bool = False, database_url: str | None = None) -> list[dict]:
    """One size in a child process with a fresh home (and, with a server URL, a fresh PostgreSQL database)."""
    from bench import pg

    with tempfile.TemporaryDirectory(prefix="ormah-latency-") as tmp, \
            pg.scratch(database_url, f"ormah_latency_{size}") as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_") or k == "ORMAH_SQLITE_DRIVER"}
        env["ORMAH_LOG_LEVEL"] = "WARNING"
        if url:
            env["ORMAH_DATABASE_URL"] = url
        command = [sys.executable, "-m", "bench.recall_latency", "--child", str(size), "--queries",
                   str(queries), "--home", tmp] + (["--tuned"] if tuned else [])
        out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout
        return json.loads(out.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--write", action="store_true", help="replace its marked block in docs/benchmarks.md")
    parser.add_argument("--tuned", action="store_true",
                        help="also measure the matrix with PRAGMA mmap_size / cache_size on the connection")
    parser.add_argument("--database-url", help="run on this PostgreSQL server instead of SQLite: each size gets a "
                        "fresh database on it, dropped afterwards (scripts/pg-cluster.sh prints a throwaway one's URL)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.database_url and args.write:
        parser.error("--write replaces the SQLite section; PostgreSQL figures go to docs/benchmarks.md through "
                     "`python -m bench.pg_beside`")
    if args.child:
        sys.stdout.write(json.dumps(child(args.child, args.queries, args.home, args.tuned)) + "\n")
        return 0
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        for result in run_size(size, queries=args.queries, tuned=args.tuned, database_url=args.database_url):
            results.append(result)
            sys.stderr.write(f"{size}: {result}\n")
    text = render(results, _machine())
    sys.stdout.write(text + "\n")
    if args.write:
        write_block("recall_latency", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
