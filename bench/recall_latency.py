"""Recall latency: warm `memory.search.recall` p50/p95 over 50 queries on synthetic stores of 1k, 10k, 100k nodes.

    python -m bench.recall_latency [--sizes 1000,10000,100000] [--queries 50] [--write]

Each size runs in its own child process with a fresh temporary ORMAH_HOME (file database, migrated).

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

Targets: p95 <= 40 ms at 10k and <= 150 ms at 100k. `--write` replaces the "Recall latency" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import re
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

SECTION = "Recall latency"
REPO = Path(__file__).resolve().parent.parent
BENCH_DOC = REPO / "docs" / "benchmarks.md"
TARGETS_MS = {10_000: 40.0, 100_000: 150.0}
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
DIM = 384
SEED = 7

TOPICS = [
    "invoice generator", "payment webhook", "login page", "search index", "sync worker", "cron scheduler",
    "API gateway", "rate limiter", "retry queue", "feature flags", "upload endpoint", "report exporter",
    "notification fan-out", "session store", "audit log", "metrics collector", "image resizer", "billing ledger",
    "moisture sensor", "valve controller", "backup job", "DNS resolver", "ingress controller", "bibliography",
    "chapter draft", "settings panel", "graph view", "CSV importer", "tax calculation", "currency rounding",
    "deploy pipeline", "release checklist", "on-call rota", "alert routing", "secrets vault", "TLS certificates",
    "database migration", "connection pool", "query planner", "cache invalidation", "event outbox", "MQTT broker",
    "battery budget", "deep sleep", "OTA updates", "soil readings", "thesis dataset", "literature review",
]
TOOLS = ["PostgreSQL", "SQLite", "Redis", "Go", "Python", "SvelteKit", "Django", "k3s", "Kafka", "ESP32", "Caddy",
         "Neovim", "ripgrep", "pytest", "Grafana", "Prometheus", "ntfy", "Vault", "SOPS", "Terraform", "restic"]
PEOPLE = ["Dana", "Marco", "Priya", "Tomasz", "Aiko", "Lena", "Kwame", "Sofia", "Ravi", "Ingrid", "Mateo"]
PROJECTS = ["billing-service", "ormah-web", "garden-iot", "thesis", "infra", "mobile-app", "data-pipeline"]
SYMPTOMS = ["times out", "returns 502", "double-counts", "leaks file descriptors", "deadlocks", "drops messages",
            "rounds amounts down", "skips the last page", "panics on empty input", "retries forever"]
CONDITIONS = ["the queue backs up", "two workers start at once", "the payload has emoji", "the disk is nearly full",
              "daylight saving time changes", "the cache is cold", "the upstream is slow", "Wi-Fi drops"]
FIXES = ["an idempotency key", "a per-tenant lock", "streaming the response", "a bounded retry with jitter",
         "normalising to UTC at the edge", "a partial index", "moving the work to a background job"]
REASONS = ["it starts faster", "the team already uses it", "it works offline", "the defaults are sane",
           "the error messages are clearer", "it survived the last outage"]
TAGS = ["postgres", "latency", "billing", "security", "ops", "firmware", "writing", "testing", "ci", "incident"]
TEMPLATES = [
    ("fact", "The {topic} in {project} runs on {tool} and {symptom} when {condition}.", None),
    ("decision", "Decided to move the {topic} to {tool} because {reason}; {person} agreed.", "{tool} for the {topic}"),
    ("event", "Incident: the {topic} {symptom} when {condition}. Fixed by {fix}.", "Incident: {topic}"),
    ("procedure", "To fix the {topic} when it {symptom}: check whether {condition}, then try {fix}.", None),
    ("preference", "{person} prefers {tool} for the {topic} because {reason}.", None),
    ("observation", "The {topic} got slower after the {tool} upgrade; {person} suspects {condition}.", None),
    ("goal", "Goal: make the {topic} stop failing when {condition}, using {fix}.", "Fix the {topic}"),
    ("concept", "In the {topic}, {fix} means retried work is safe when {condition}.", "{topic} idea"),
]
TYPES_OF_EDGES = ["supports", "part_of", "depends_on", "derived_from", "related_to", "contradicts"]


# ---------------------------------------------------------------------------
# Synthetic memories and the stand-in document embedder
# ---------------------------------------------------------------------------

def _topic_of(text: str) -> int:
    low = text.lower()
    for i, topic in enumerate(TOPICS):
        if topic.lower() in low:
            return i
    return int(hashlib.sha256(low.encode()).hexdigest(), 16) % len(TOPICS)


def _centroids() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    c = rng.standard_normal((len(TOPICS), DIM)).astype(np.float32)
    return c / np.linalg.norm(c, axis=1, keepdims=True)


def _near(centroid: np.ndarray, spread: float, key: str) -> np.ndarray:
    rng = np.random.default_rng(int(hashlib.sha256(key.encode()).hexdigest()[:16], 16))
    v = centroid + spread * rng.standard_normal(DIM).astype(np.float32) / np.sqrt(DIM)
    return (v / np.linalg.norm(v)).astype(np.float32)


class TopicEmbedder:
    """Stand-in for documents: a random unit vector near the text's topic centroid (no model)."""

    model_id = "bench/topic-random-384"
    dim = DIM

    def __init__(self) -> None:
        self.centroids = _centroids()

    def embed_documents(self, texts):
        return np.stack([_near(self.centroids[_topic_of(t)], 1.2, t) for t in texts])

    def embed_query(self, text):
        return _near(self.centroids[_topic_of(text)], 0.8, "q:" + text)


class TimedQueryEmbedder:
    """The real MiniLM computes each query vector (its cost counts); the vector used is the topic stand-in."""

    def __init__(self, real, stand_in: TopicEmbedder) -> None:
        self.real, self.stand_in, self.model_id, self.dim = real, stand_in, stand_in.model_id, DIM

    def embed_documents(self, texts):
        return self.stand_in.embed_documents(texts)

    def embed_query(self, text):
        self.real.embed_query(text)
        return self.stand_in.embed_query(text)


def _fill(rng: random.Random, template: str, topic: str) -> str:
    return template.format(topic=topic, tool=rng.choice(TOOLS), person=rng.choice(PEOPLE),
                           project=rng.choice(PROJECTS), symptom=rng.choice(SYMPTOMS),
                           condition=rng.choice(CONDITIONS), fix=rng.choice(FIXES), reason=rng.choice(REASONS))


def generate(n: int):
    """n synthetic nodes (deterministic for a size)."""
    from memory.domain.node import Connection, Node

    rng = random.Random(SEED)
    nodes: list[Node] = []
    for i in range(n):
        kind, body, title_tpl = rng.choice(TEMPLATES)
        topic = rng.choice(TOPICS)
        content = _fill(rng, body, topic)
        if rng.random() < 0.4:
            content += " " + _fill(rng, rng.choice(TEMPLATES)[1], topic)
        created = NOW - timedelta(seconds=rng.randint(0, 730 * 86400))
        links = ()
        if nodes and rng.random() < 0.2:
            links = tuple(Connection(target=rng.choice(nodes).id, edge=rng.choice(TYPES_OF_EDGES),
                                     weight=round(rng.uniform(0.4, 1.0), 2)) for _ in range(rng.randint(1, 2)))
        nodes.append(Node(
            id=str(uuid.UUID(int=rng.getrandbits(128), version=4)), type=kind,
            tier="core" if rng.random() < 0.01 else ("archival" if rng.random() < 0.1 else "working"),
            content=content, title=_fill(rng, title_tpl, topic) if title_tpl and rng.random() < 0.6 else None,
            created=created, updated=created, last_accessed=created,
            space=None if rng.random() < 0.25 else rng.choice(PROJECTS),
            tags=tuple(sorted(set(rng.sample(TAGS, rng.randint(0, 3))))), connections=links,
            valid_until=created + timedelta(days=30) if rng.random() < 0.03 and created < NOW - timedelta(days=40)
            else None,
        ))
    return nodes


def queries(nodes, count: int):
    """A deterministic mix: keywords (20/50), questions (15/50), a current project (10/50), last week (5/50)."""
    from memory.domain.search import SearchQuery
    from memory.domain.text import content_words

    rng = random.Random(SEED + 1)
    out = []
    for i in range(count):
        node = rng.choice(nodes)
        topic = TOPICS[_topic_of(node.content)]
        words = [w for w in content_words(node.content) if w not in topic.lower().split()]
        kind = i % 10
        if kind < 4:
            out.append(SearchQuery(query=f"{topic} {' '.join(rng.sample(words, min(2, len(words))))}"))
        elif kind < 7:
            out.append(SearchQuery(query=f"how do we handle the {topic} when {rng.choice(CONDITIONS)}?"))
        elif kind < 9:
            out.append(SearchQuery(query=f"{topic} {rng.choice(words)}", default_space=rng.choice(PROJECTS)))
        else:
            out.append(SearchQuery(query=f"what changed in the {topic} last week?"))
    return out


# ---------------------------------------------------------------------------
# Child: one size in one fresh home
# ---------------------------------------------------------------------------

def _django(home: Path) -> None:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ.pop("ORMAH_DB_PATH", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


TUNING = ("PRAGMA mmap_size = 1073741824", "PRAGMA cache_size = -262144")  # 1 GiB map, 256 MiB page cache


def _measure(qs, emb, real) -> dict:
    from memory.search import recall

    for q in qs[:5]:
        recall(query=q, now=NOW, embedder=emb)
    times, embed_ms = [], []
    for q in qs:
        t = time.perf_counter()
        recall(query=q, now=NOW, embedder=emb)
        times.append((time.perf_counter() - t) * 1000)
    for q in qs[:20]:
        t = time.perf_counter()
        real.embed_query(q.query)
        embed_ms.append((time.perf_counter() - t) * 1000)
    arr = np.asarray(times)
    return {"p50": float(np.percentile(arr, 50)), "p95": float(np.percentile(arr, 95)), "max": float(arr.max()),
            "mean": float(arr.mean()), "embed_p50": float(np.percentile(embed_ms, 50))}


def child(size: int, count: int, home: Path, tuned: bool) -> list[dict]:
    """Build one store, then measure with the default connection (and with the tuning pragmas when asked)."""
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
    with connection.cursor() as cur:
        cur.execute("SELECT sqlite_version(), vec_version()")
        sqlite_version, vec_version = cur.fetchone()
    facts = {"size": size, "queries": count, "build_s": round(built, 1), "sqlite": sqlite_version,
             "sqlite_vec": vec_version}
    results = [{**facts, "tuned": False, **_measure(qs, emb, real)}]
    if tuned:
        with connection.cursor() as cur:
            for pragma in TUNING:
                cur.execute(pragma)
        results.append({**facts, "tuned": True, **_measure(qs, emb, real)})
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


def render(results: list[dict], machine: str) -> str:
    lines = [
        f"`python -m bench.recall_latency` — machine: {machine}; SQLite {results[0]['sqlite']}, sqlite-vec "
        f"{results[0]['sqlite_vec']}. Warm `memory.search.recall` (limit 10, activation on), {results[0]['queries']} "
        "queries per size after 5 warm-up queries: keywords, questions, a current project and \"last week\" "
        "windows. The store is synthetic and built straight through `memory.index.index_nodes` with stand-in "
        "topic vectors (no files, no model); each query is embedded by the real MiniLM, whose time is included "
        "(see the module docstring).",
        "",
        "| nodes | connection | p50 ms | p95 ms | max ms | mean ms | query embed p50 ms | target p95 | build s |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        target = TARGETS_MS.get(r["size"])
        mark = "—" if target is None else f"≤ {target:.0f} {'✓' if r['p95'] <= target else '✗'}"
        conn = "mmap 1 GiB + 256 MiB cache" if r["tuned"] else "default"
        lines.append(f"| {r['size']:,} | {conn} | {r['p50']:.1f} | {r['p95']:.1f} | {r['max']:.1f} | "
                     f"{r['mean']:.1f} | {r['embed_p50']:.1f} | {mark} | {r['build_s']:.0f} |")
    return "\n".join(lines)


def _doc_section(body: str) -> None:
    section = f"## {SECTION}\n\n{body.strip()}\n"
    text = BENCH_DOC.read_text() if BENCH_DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {re.escape(SECTION)}[ \t]*\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    tmp = BENCH_DOC.with_suffix(".md.tmp")
    tmp.write_text(text)
    os.replace(tmp, BENCH_DOC)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--write", action="store_true", help="replace the section in docs/benchmarks.md")
    parser.add_argument("--no-tuned", action="store_true",
                        help="skip the second measurement with PRAGMA mmap_size / cache_size on the connection")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.stdout.write(json.dumps(child(args.child, args.queries, args.home, not args.no_tuned)) + "\n")
        return 0
    results = []
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="ormah-latency-") as tmp:
            env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_") or k == "ORMAH_SQLITE_DRIVER"}
            env["ORMAH_LOG_LEVEL"] = "WARNING"
            command = [sys.executable, "-m", "bench.recall_latency", "--child", str(size), "--queries",
                       str(args.queries), "--home", tmp] + (["--no-tuned"] if args.no_tuned else [])
            out = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout
            for result in json.loads(out.strip().splitlines()[-1]):
                results.append(result)
                sys.stderr.write(f"{size}: {result}\n")
    text = render(results, _machine())
    sys.stdout.write(text + "\n")
    if args.write:
        _doc_section(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
