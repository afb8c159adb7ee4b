"""LoCoMo turn retrieval through the real services: recall@5/10/30 per category for BM25 alone, vectors alone and
the full pipeline, the hubness figure, and search latency.

    python -m bench.locomo [--write] [--embedder DOTTED --model NAME] [--database-url URL | --fresh]
                           [--json PATH] [--baseline PATH [--baseline-label TEXT]] [--scorer weights-NAME.json]

Protocol (../shared/benchmarks/locomo-dev/README.md): each conversation is its own store; every turn is one memory
"Speaker: text" (plus " [shares CAPTION]") remembered in batch through `nodes_remember` with its session's date as
`created`; every question of categories 1-4 whose evidence names existing turns is a query; recall@k is the share of
its evidence turns in the top k, averaged over questions. Hubness is the share of top-10 slots held by each
conversation's 5 most frequent hits (lower is better; 5 x 10 / n would be one hub set answering everything).

The data is read from ../shared/benchmarks/locomo-dev relative to the repository root (never copied into it). The
stores and the query embeddings are cached per embedding model under ~/.cache/ormah-bench/locomo/<model>/, so a rerun
only searches. Latency is the in-process search time of the full pipeline with the query vector cached (the query
embedding is timed apart). `--scorer` ranks the full pipeline with another packaged scorer file (memory/ranking/,
e.g. one refitted on another model's features by `bench.fit_scorer --embedder ... --out ...`).

With `--database-url postgres://...` every conversation's store is built on PostgreSQL instead, in a fresh database
of that server (dropped after its questions) and a temporary home, through the same services, queries (the same
query-vector cache) and scorer; nothing of it is cached (`--fresh` does the same on SQLite).

The split is read by bench/locomo_data.py and the stores are built by bench/locomo_stores.py; this module ranks,
scores and reports.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench._common import percentile
from bench.locomo_data import (  # DATA, Question, Turn, folds, shared_dir: re-exported as locomo.*
    CATEGORIES,
    DATA,  # noqa: F401
    Conversation,
    Question,  # noqa: F401
    Turn,  # noqa: F401
    folds,  # noqa: F401
    load_split,
    shared_dir,  # noqa: F401
)
from bench.locomo_stores import (  # use_store: re-exported as locomo.* (bench/scorer_pools.py)
    CACHE,
    CachedQueries,
    build_store,
    model_slug,
    setup_django,
    use_scorer,
    use_store,  # noqa: F401
)

KS = (5, 10, 30)
LIMIT = 30
MODES = ("bm25", "vectors", "full")
MODE_LABELS = {"bm25": "BM25 alone", "vectors": "Vectors alone", "full": "Full pipeline"}


# ---------------------------------------------------------------------------
# Ranking and scoring
# ---------------------------------------------------------------------------

@dataclass
class ConvResult:
    sample_id: str
    ranked: dict[str, list[list[int]]] = field(default_factory=dict)  # mode -> per question row ids
    recall_ms: list[float] = field(default_factory=list)
    recall_cpu_ms: list[float] = field(default_factory=list)
    server_cpu_ms: float = 0.0  # PostgreSQL's process during the full-pipeline searches (0 on SQLite)


def rank_conversation(conv: Conversation, embedder: CachedQueries, *, now: datetime, conf=None) -> ConvResult:
    """Every question of one conversation ranked three ways (the store must be in use)."""
    from django.db import connection

    from bench.pg import server_cpu
    from memory.domain.search import SearchQuery
    from memory.search import Filters, fts_search, query_vector, recall_scored, vector_search

    out = ConvResult(conv.sample_id, {m: [] for m in MODES})
    server = server_cpu(connection)
    filters = Filters(active_at=now)
    kwargs = {} if conf is None else {"conf": conf}
    for q in conv.questions:
        out.ranked["bm25"].append([h.row_id for h in fts_search(q.text, LIMIT, filters)])
        vec = query_vector(q.text, embedder)
        out.ranked["vectors"].append([h.row_id for h in vector_search(vec, LIMIT, filters)])
        query = SearchQuery(query=q.text, limit=LIMIT)
        wall, cpu, served = time.perf_counter(), time.process_time(), server()
        scored = recall_scored(query=query, now=now, embedder=embedder, **kwargs)
        out.recall_ms.append(1000 * (time.perf_counter() - wall))
        out.recall_cpu_ms.append(1000 * (time.process_time() - cpu))
        out.server_cpu_ms += 1000 * (server() - served)
        out.ranked["full"].append([c.row_id for c in scored])
    return out


def recall_at(ranked: list[int], relevant: set[int], k: int) -> float:
    return len(relevant & set(ranked[:k])) / len(relevant)


def hubness(lists: list[list[int]], top: int = 5, k: int = 10) -> float:
    """Share of the top-k slots of one conversation's queries held by its `top` most frequent hits."""
    counts = Counter(r for ranked in lists for r in ranked[:k])
    slots = sum(min(len(ranked), k) for ranked in lists)
    return sum(n for _, n in counts.most_common(top)) / slots if slots else 0.0


def summarise(convs: list[Conversation], keymaps: dict[str, dict[str, int]], results: dict[str, ConvResult],
              modes=MODES) -> dict:
    """recall@k per mode, per category and overall (question-averaged), and hubness (conversation-averaged)."""
    sums: dict[tuple[str, str, int], float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    hub: dict[str, list[float]] = defaultdict(list)
    for conv in convs:
        res, keymap = results[conv.sample_id], keymaps[conv.sample_id]
        for mode in modes:
            hub[mode].append(hubness(res.ranked[mode]))
        for i, q in enumerate(conv.questions):
            relevant = {keymap[e] for e in q.evidence}
            cat = CATEGORIES[q.category]
            for group in (cat, "overall"):
                counts[group] += 1
                for mode in modes:
                    for k in KS:
                        sums[(mode, group, k)] += recall_at(res.ranked[mode][i], relevant, k)
    table = {mode: {g: {k: sums[(mode, g, k)] / counts[g] for k in KS} for g in counts} for mode in modes}
    per_question = {mode: [recall_at(results[c.sample_id].ranked[mode][i],
                                     {keymaps[c.sample_id][e] for e in q.evidence}, 10)
                           for c in convs for i, q in enumerate(c.questions)] for mode in modes}
    return {"recall": table, "n": dict(counts), "hubness": {m: sum(v) / len(v) for m, v in hub.items()},
            "r10_per_question": per_question}


def render(summary: dict, modes=MODES, labels=MODE_LABELS) -> str:
    groups = [*(c for c in CATEGORIES.values() if c in summary["n"]), "overall"]
    head = "| ranking | " + " | ".join(f"{g} (n={summary['n'][g]}) R@5 / R@10 / R@30" for g in groups) + \
           " | hubness |"
    rows = [head, "|---|" + "---:|" * (len(groups) + 1)]
    for mode in modes:
        cells = [" / ".join(f"{summary['recall'][mode][g][k]:.3f}" for k in KS) for g in groups]
        rows.append(f"| {labels[mode]} | " + " | ".join(cells) + f" | {summary['hubness'][mode]:.3f} |")
    return "\n".join(rows)


def run(convs: list[Conversation], *, embedder_path: str | None = None, model: str | None = None, conf=None,
        now: datetime | None = None, database_url: str | None = None, fresh: bool = False,
        scorer: str | None = None) -> tuple[dict[str, dict[str, int]], dict[str, ConvResult], CachedQueries]:
    """Build (or reuse) every store and rank every question; returns keymaps, results and the query cache.
    With `database_url` (a PostgreSQL server) each store is built afresh in its own database there; `fresh`
    builds the SQLite stores afresh in temporary homes instead of reusing the cached ones."""
    setup_django(CACHE, embedder=embedder_path, model=model, database_url=database_url)
    use_scorer(scorer)
    from memory import runtime

    inner = runtime.embedder()
    base = CACHE / model_slug(inner.model_id)
    base.mkdir(parents=True, exist_ok=True)
    embedder = CachedQueries(inner, base / "queries.json")
    now = now or datetime(2026, 11, 23, tzinfo=UTC)
    keymaps, results = {}, {}
    for conv in convs:
        if database_url or fresh:
            keymaps[conv.sample_id], results[conv.sample_id] = _fresh_store(conv, embedder, database_url,
                                                                            now=now, conf=conf)
        else:
            keymaps[conv.sample_id] = build_store(conv, base / conv.sample_id)
            results[conv.sample_id] = rank_conversation(conv, embedder, now=now, conf=conf)
        embedder.save()
    return keymaps, results, embedder


def _fresh_store(conv: Conversation, embedder: CachedQueries, server_url: str | None, *, now: datetime,
                 conf=None) -> tuple[dict[str, int], ConvResult]:
    """One conversation's store built and ranked in a temporary home (and, with a server, a fresh database of it),
    both removed afterwards."""
    from django.db import connections

    from bench import pg

    name = "ormah_locomo_" + re.sub(r"[^a-z0-9]+", "_", conv.sample_id.lower())
    with tempfile.TemporaryDirectory(prefix="ormah-locomo-") as tmp, pg.scratch(server_url, name) as url:
        keymap = build_store(conv, Path(tmp) / conv.sample_id, database=name if url else None)
        ranked = rank_conversation(conv, embedder, now=now, conf=conf)
        connections["default"].close()  # before the database is dropped
    return keymap, ranked


def _scorer_version() -> str:
    from memory.ranking.scorer import load_scorer

    return load_scorer().version


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace its marked block in docs/benchmarks.md")
    parser.add_argument("--embedder", help="dotted path of the Embedder class (default: the configured one)")
    parser.add_argument("--model", help="embedding model name passed to the embedder")
    parser.add_argument("--json", type=Path, help="also write the summary as JSON here")
    parser.add_argument("--baseline", type=Path, help="a --json summary of an earlier run: its full pipeline row "
                                                      "and latency are shown beside this run's")
    parser.add_argument("--baseline-label", default="Full pipeline before")
    parser.add_argument("--database-url", help="build every store on this PostgreSQL server instead of SQLite, each "
                        "in a fresh database dropped afterwards (scripts/pg-cluster.sh prints a throwaway one's URL)")
    parser.add_argument("--scorer", help="a packaged scorer file of memory/ranking/ for the full pipeline "
                        "(default: the one recall reads)")
    parser.add_argument("--fresh", action="store_true", help="build the SQLite stores afresh in temporary homes "
                        "(not cached), as --database-url always does")
    args = parser.parse_args(argv)
    if args.database_url and args.write:
        parser.error("--write replaces the SQLite section; PostgreSQL figures go to docs/benchmarks.md through "
                     "`python -m bench.pg_beside`")
    if args.scorer and args.write:
        parser.error("--write replaces the section of the scorer recall reads; give other files' figures by hand")
    convs = load_split()
    cpu = time.process_time()
    keymaps, results, embedder = run(convs, embedder_path=args.embedder, model=args.model,
                                     database_url=args.database_url, fresh=args.fresh, scorer=args.scorer)
    summary = summarise(convs, keymaps, results)
    ms = [x for r in results.values() for x in r.recall_ms]
    cpu_ms = [x for r in results.values() for x in r.recall_cpu_ms]
    summary["latency"] = {"p50": percentile(ms, 50), "p95": percentile(ms, 95), "cpu_p50": percentile(cpu_ms, 50),
                          "cpu_p95": percentile(cpu_ms, 95), "embed_queries": len(embedder.embed_seconds),
                          "cpu_mean": sum(cpu_ms) / len(cpu_ms),
                          "server_cpu_mean": sum(r.server_cpu_ms for r in results.values()) / len(cpu_ms)}
    modes, labels = MODES, dict(MODE_LABELS)
    before = None
    if args.baseline:
        before = json.loads(args.baseline.read_text())
        summary["recall"]["before"] = {g: {int(k): v for k, v in ks.items()}
                                       for g, ks in before["recall"]["full"].items()}
        summary["hubness"]["before"] = before["hubness"]["full"]
        modes, labels["before"] = (*MODES[:2], "before", "full"), args.baseline_label
    table = render(summary, modes, labels)
    lat = summary["latency"]
    text = "\n".join([
        f"`python -m bench.locomo` on {len(convs)} conversations ({sum(len(c.turns) for c in convs)} turns, "
        f"{summary['n']['overall']} questions), model {embedder.model_id}, scorer {_scorer_version()}, limit "
        f"{LIMIT}.", "", table, "",
        f"Full pipeline search (query vector cached): wall p50 {lat['p50']:.1f} ms, p95 {lat['p95']:.1f} ms; "
        f"CPU p50 {lat['cpu_p50']:.1f} ms, p95 {lat['cpu_p95']:.1f} ms; load average "
        f"{os.getloadavg()[0]:.1f}; bench CPU {time.process_time() - cpu:.0f} s." + (
            f" Before: wall p50 {before['latency']['p50']:.1f} ms, p95 {before['latency']['p95']:.1f} ms; CPU p50 "
            f"{before['latency']['cpu_p50']:.1f} ms, p95 {before['latency']['cpu_p95']:.1f} ms." if before else ""),
    ])
    print(text)
    if args.json:
        args.json.write_text(json.dumps(summary, indent=1))
    if args.write:
        from bench._common import write_block

        write_block("locomo", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
