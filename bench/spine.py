"""Memory spine benchmark: remember latency, index rebuild throughput and resident memory.

    python -m bench.spine [--sizes 1000,10000] [--calls 200] [--write]

Every scenario runs in its own child process with a fresh temporary ORMAH_HOME (file database, migrated with
`migrate`), the real offline MiniLM int8 embedder and the real services:

- remember: `memory.services.node_create` (auto-link on) called `--calls` times on top of N existing nodes.
  The N nodes are generated text (bench/_common.py), written with `memory.files.write_node` and indexed by one
  `memory.index.sync`. Their vectors are kept in a bench-local cache (`--cache-dir`) between runs and seeded
  into the embedding cache, so the setup does not re-embed them; the remembered texts are new and always embedded.
- rebuild: N files, then `memory.rebuild.rebuild(store, embedder)` cold (fresh DB, empty embedding cache,
  model already loaded; embed time measured around the embedder), with `verify=True` (every row rewritten, the
  rebuild before issue 13 item 6), again as it runs by default ("unchanged": rows whose file hash is unchanged are
  kept), the floor (reading and hashing every file) and the incremental `sync` with nothing changed.

Targets: remember p50 <= 30 ms; unchanged full rebuild >= 2,000 nodes/s (bench/spine_report.py renders the
results against them). `--write` replaces its marked block in the "Memory spine" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from bench._common import DEFAULT_CACHE_DIR, REPO, Memory, corpus, machine, percentile, rss_mb, write_block
from bench.spine_report import report_markdown

SECTION = "Memory spine"
CORPUS_SEED = 1
REMEMBER_SEED = 2
PASS_ENV = ("ORMAH_EMBEDDING_THREADS", "ORMAH_SQLITE_DRIVER")


# ---------------------------------------------------------------------------
# Child side: runs inside a fresh ORMAH_HOME
# ---------------------------------------------------------------------------

def django_home(home: Path) -> dict:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import connection

    call_command("migrate", verbosity=0, interactive=False)
    db = Path(connection.settings_dict["NAME"])
    assert db.is_file() and db.is_relative_to(home), f"expected a file database under {home}, got {db}"
    from ormah_site.sqlitevec import base as sqlitevec

    with connection.cursor() as cur:
        cur.execute("SELECT sqlite_version(), vec_version()")
        sqlite_version, vec_version = cur.fetchone()
    return {"sqlite": sqlite_version, "sqlite_vec": vec_version, "sqlite_driver": sqlitevec.DRIVER, "db": str(db)}


class TimedEmbedder:
    """The real embedder, with the time spent embedding added up (same model id, so the same cache keys)."""

    def __init__(self, inner) -> None:
        self.inner, self.model_id, self.dim = inner, inner.model_id, inner.dim
        self.seconds, self.texts = 0.0, 0

    def embed_documents(self, texts):
        start = time.perf_counter()
        out = self.inner.embed_documents(texts)
        self.seconds += time.perf_counter() - start
        self.texts += len(texts)
        return out

    def embed_query(self, text):
        return self.embed_documents([text])[0]

    def reset(self) -> None:
        self.seconds, self.texts = 0.0, 0


def _node(m: Memory):
    from memory.domain.node import Connection, Node

    return Node(
        id=m.id, type=m.type, tier="working", content=m.content, title=m.title, created=m.created,
        updated=m.created, last_accessed=m.created, space=m.space, tags=m.tags, source="bench:spine",
        connections=tuple(Connection(target=t, edge="related_to", weight=0.7, reason="bench") for t in m.connections),
    )


def write_files(store, memories: list[Memory]) -> tuple[float, list]:
    """Write the memories as node files exactly as the store names and renders them; returns seconds and nodes.

    A bulk setup, not a measurement of `memory.files.write_node`: the store looks for an existing file of each new
    id by listing the whole folder (O(N) per new file, so O(N^2) for N files) and fsyncs every file, which
    makes 10k files take minutes. Name clashes fall back to `files.write_node`.
    """
    from memory import files
    from memory.domain.markdown import render
    from memory.domain.slug import node_filename

    nodes = [_node(m) for m in memories]
    start = time.perf_counter()
    store.nodes_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for node in nodes:
        path = store.nodes_dir / node_filename(node)
        if path.exists():
            files.write_node(store, node)
            continue
        path.write_bytes(render(node).encode("utf-8"))
    return time.perf_counter() - start, nodes


def _cache_file(cache_dir: Path, model_id: str) -> Path:
    return cache_dir / ("vectors-" + "".join(c if c.isalnum() else "-" for c in model_id) + ".npz")


def cache_seed(cache_dir: Path, nodes: list, model_id: str) -> int:
    """Copy cached vectors of these nodes' texts into the (empty) embedding cache; returns how many."""
    from memory.index import text_hash
    from memory.models import EmbeddingCacheRow

    path = _cache_file(cache_dir, model_id)
    if not path.exists():
        return 0
    with np.load(path) as data:
        cached = dict(zip(data["hashes"].tolist(), data["vectors"]))
    wanted = {text_hash(n) for n in nodes}
    rows = [EmbeddingCacheRow(text_hash=h, model_id=model_id, vector=cached[h].tobytes())
            for h in wanted if h in cached]
    EmbeddingCacheRow.objects.bulk_create(rows, batch_size=500, ignore_conflicts=True)
    return len(rows)


def cache_save(cache_dir: Path, nodes: list, model_id: str) -> None:
    """Add the embedding cache's vectors of these nodes' texts to the bench-local cache."""
    from memory.index import text_hash
    from memory.models import EmbeddingCacheRow

    path = _cache_file(cache_dir, model_id)
    cached: dict[str, np.ndarray] = {}
    if path.exists():
        with np.load(path) as data:
            cached = dict(zip(data["hashes"].tolist(), data["vectors"]))
    wanted = {text_hash(n) for n in nodes} - cached.keys()
    if not wanted:
        return
    for h, vector in EmbeddingCacheRow.objects.filter(model_id=model_id).values_list("text_hash", "vector"):
        if h in wanted:
            cached[h] = np.frombuffer(bytes(vector), dtype=np.float32)
    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".{os.getpid()}.tmp.npz")
    np.savez(tmp, hashes=np.array(list(cached)), vectors=np.stack(list(cached.values())).astype(np.float32))
    os.replace(tmp, path)


def model_warm(emb) -> float:
    start = time.perf_counter()
    emb.embed_query("warm up the model")
    return time.perf_counter() - start


class Phases:
    """Time spent inside a few wrapped functions during one call (wrapping costs about a microsecond)."""

    def __init__(self) -> None:
        self.now: dict[str, float] = defaultdict(float)

    def wrap(self, owner, name: str, label: str) -> None:
        inner = getattr(owner, name)
        now = self.now

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                now[label] += time.perf_counter() - start

        setattr(owner, name, timed)

    def take(self) -> dict[str, float]:
        out = dict(self.now)
        self.now.clear()
        return out


def child_remember(home: Path, size: int, calls: int, cache_dir: Path) -> dict:
    result: dict = {"scenario": "remember", "size": size, "calls": calls, "env": django_home(home)}
    result["rss_setup"] = rss_mb()
    from memory import index, runtime
    from memory.domain.requests import NodeCreate
    from memory import files
    from memory.services import node_create

    store, emb = runtime.store(), runtime.embedder()
    memories = corpus(size, seed=CORPUS_SEED)
    result["write_files_s"], nodes = write_files(store, memories)
    result["cache_seeded"] = cache_seed(cache_dir, nodes, emb.model_id)
    result["model_load_s"] = model_warm(emb)
    result["rss_model"] = rss_mb()
    start = time.perf_counter()
    report = index.sync(store, embedder=emb)
    result["setup_sync_s"] = time.perf_counter() - start
    result["setup_embedded"] = report.embedded
    assert report.indexed == size and not report.malformed, report.as_dict()
    cache_save(cache_dir, nodes, emb.model_id)

    phases = Phases()
    phases.wrap(emb, "embed_documents", "embed")
    from memory.services import nodes as node_services

    phases.wrap(node_services, "vector_search", "knn")  # auto-link's search (the in-process matrix)
    phases.wrap(files, "write_node", "write")
    phases.wrap(index, "index_nodes", "index")
    requests = [
        NodeCreate(content=m.content, title=m.title, type=m.type, tags=list(m.tags), space=m.space,
                   source="bench:spine")
        for m in corpus(calls, seed=REMEMBER_SEED, exclude={f"{m.title or ''} {m.content}" for m in memories},
                        connect=False)
    ]
    totals, cpu, split, links = [], [], defaultdict(list), []
    result["load_start"] = os.getloadavg()[0]
    for request in requests:
        start, start_cpu = time.perf_counter(), time.thread_time()
        created = node_create(request=request, auto_link=True)
        elapsed = time.perf_counter() - start
        cpu.append((time.thread_time() - start_cpu) * 1000)
        totals.append(elapsed * 1000)
        taken = phases.take()
        for label in ("embed", "knn", "write", "index"):
            split[label].append(taken.get(label, 0.0) * 1000)
        split["other"].append((elapsed - sum(taken.values())) * 1000)
        links.append(len(created.auto_links))
    result["ms"], result["cpu_ms"], result["load_end"] = totals, cpu, os.getloadavg()[0]
    result["split_p50_ms"] = {k: percentile(v, 50) for k, v in split.items()}
    result["auto_links_mean"] = float(np.mean(links))
    result["rss_end"] = rss_mb()
    return result


def child_rebuild(home: Path, size: int, repeat: int, cache_dir: Path) -> dict:
    result: dict = {"scenario": "rebuild", "size": size, "env": django_home(home)}
    result["rss_setup"] = rss_mb()
    from memory import index, runtime
    from memory.rebuild import rebuild

    store, emb = runtime.store(), runtime.embedder()
    result["write_files_s"], nodes = write_files(store, corpus(size, seed=CORPUS_SEED))
    result["model_load_s"] = model_warm(emb)
    result["rss_model"] = rss_mb()
    timed = TimedEmbedder(emb)

    result["load_start"] = os.getloadavg()[0]
    start = time.perf_counter()
    report = rebuild(store, embedder=timed)
    total = time.perf_counter() - start
    assert report.indexed == size and report.embedded == size, report.as_dict()
    result["cold"] = {"total_s": total, "embed_s": timed.seconds, "index_s": total - timed.seconds,
                      "embedded": report.embedded}
    result["rss_cold"] = rss_mb()
    cache_save(cache_dir, nodes, emb.model_id)

    for label, verify in (("verify", True), ("unchanged", False)):
        result[f"{label}_s"], result[f"{label}_cpu_s"] = [], []
        for _ in range(repeat):
            timed.reset()
            start, start_cpu = time.perf_counter(), time.process_time()
            report = rebuild(store, embedder=timed, verify=verify)
            result[f"{label}_s"].append(time.perf_counter() - start)
            result[f"{label}_cpu_s"].append(time.process_time() - start_cpu)
            assert report.indexed == (size if verify else 0) and timed.texts == 0, report.as_dict()
    result["floor_s"] = []
    for _ in range(repeat):  # the floor: read and hash every file, the work a hash-trusting rebuild cannot skip
        start = time.perf_counter()
        for path in store.iter_paths():
            store.stat(path)
        result["floor_s"].append(time.perf_counter() - start)
    result["incremental_s"] = []
    for _ in range(repeat):
        start = time.perf_counter()
        report = index.sync(store, embedder=timed)
        result["incremental_s"].append(time.perf_counter() - start)
        assert report.indexed == 0 and report.unchanged == size, report.as_dict()
    result["rss_end"], result["load_end"] = rss_mb(), os.getloadavg()[0]
    result["db_mb"] = os.path.getsize(result["env"]["db"]) / 1024 / 1024
    return result


# ---------------------------------------------------------------------------
# Parent side: one child per scenario, then the report (bench/spine_report.py)
# ---------------------------------------------------------------------------

def _wait_for_load(limit: float | None, timeout: float = 1800.0) -> None:
    """On a shared machine, wait (up to `timeout` s) until the 1-minute load average is below `limit`."""
    if not limit:
        return
    deadline = time.monotonic() + timeout
    while os.getloadavg()[0] >= limit and time.monotonic() < deadline:
        time.sleep(10)
    if os.getloadavg()[0] >= limit:
        print(f"[bench.spine] load still {os.getloadavg()[0]:.1f}; running anyway", file=sys.stderr, flush=True)


def _run_child(args: list[str], temp_root: Path, keep: bool) -> dict:
    home = Path(tempfile.mkdtemp(prefix="ormah-bench-", dir=temp_root))
    out = home.parent / (home.name + ".json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_") or k in PASS_ENV}
    env["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    cmd = [sys.executable, "-m", "bench.spine", "--child", *args, "--home", str(home), "--out", str(out)]
    try:
        subprocess.run(cmd, cwd=REPO, env=env, check=True)
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)
        if not keep:
            shutil.rmtree(home, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.spine", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,10000", help="existing-node counts, comma-separated")
    parser.add_argument("--calls", type=int, default=200, help="remember calls per size")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the unchanged and incremental syncs")
    parser.add_argument("--scenarios", default="rebuild,remember", help="rebuild and/or remember")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR, help="bench-local vector cache")
    parser.add_argument("--temp-root", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--keep", action="store_true", help="keep the temporary homes")
    parser.add_argument("--write", action="store_true",
                        help=f"replace its marked block in the '{SECTION}' section of docs/benchmarks.md")
    parser.add_argument("--json", type=Path, help="also dump raw results here")
    parser.add_argument("--from-json", type=Path, help="report (and --write) the results of an earlier --json run")
    parser.add_argument("--wait-load", type=float, help="before each scenario, wait until the load average is below")
    parser.add_argument("--child", choices=["remember", "rebuild"], help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        if args.child == "remember":
            result = child_remember(args.home, args.size, args.calls, args.cache_dir)
        else:
            result = child_rebuild(args.home, args.size, args.repeat, args.cache_dir)
        args.out.write_text(json.dumps(result))
        return 0

    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        facts, results, command = saved["machine"], saved["results"], saved.get("command", "python -m bench.spine")
        body = report_markdown(results, facts, command)
        print(body)
        if args.write:
            write_block("spine", body)
        return 0

    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    scenarios = [s.strip() for s in args.scenarios.split(",") if s.strip()]
    common = ["--cache-dir", str(args.cache_dir), "--calls", str(args.calls), "--repeat", str(args.repeat)]
    results = []
    for size in sizes:
        for scenario in ("rebuild", "remember"):
            if scenario in scenarios:
                _wait_for_load(args.wait_load)
                print(f"[bench.spine] {scenario} with {size:,} nodes ...", file=sys.stderr, flush=True)
                results.append(_run_child([scenario, "--size", str(size), *common], args.temp_root, args.keep))
    facts = machine(args.temp_root) | {"date": datetime.now(UTC).strftime("%Y-%m-%d")}
    command = "python -m bench.spine " + " ".join(a for a in (argv if argv is not None else sys.argv[1:]))
    body = report_markdown(results, facts, command.strip())
    print(body)
    if args.json:
        args.json.write_text(json.dumps({"machine": facts, "results": results, "command": command.strip()}, indent=1))
    if args.write:
        write_block("spine", body)
        print(f"[bench.spine] wrote its block in the '{SECTION}' section of docs/benchmarks.md", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
