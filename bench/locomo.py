"""LoCoMo turn retrieval through the real services: recall@5/10/30 per category for BM25 alone, vectors alone and
the full pipeline, the hubness figure, and search latency.

    python -m bench.locomo [--folds 5] [--write] [--embedder DOTTED --model NAME] [--database-url URL]

Protocol (../shared/benchmarks/locomo-dev/README.md): each conversation is its own store; every turn is one memory
"Speaker: text" (plus " [shares CAPTION]") remembered in batch through `nodes_remember` with its session's date as
`created`; every question of categories 1-4 whose evidence names existing turns is a query; recall@k is the share of
its evidence turns in the top k, averaged over questions. Hubness is the share of top-10 slots held by each
conversation's 5 most frequent hits (lower is better; 5 x 10 / n would be one hub set answering everything).

The data is read from ../shared/benchmarks/locomo-dev relative to the repository root (never copied into it). The
stores and the query embeddings are cached per embedding model under ~/.cache/ormah-bench/locomo/<model>/, so a rerun
only searches. Latency is the in-process search time of the full pipeline with the query vector cached (the query
embedding is timed apart).

With `--database-url postgres://...` every conversation's store is built on PostgreSQL instead, in a fresh database
of that server (dropped after its questions) and a temporary home, through the same services, queries (the same
query-vector cache) and scorer; nothing of it is cached (`--fresh` does the same on SQLite).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench._common import DEFAULT_CACHE_DIR, REPO, percentile



def shared_dir() -> Path:
    """../shared beside the repository root; from a git worktree, beside the main checkout's root."""
    here = REPO.parent / "shared"
    if here.is_dir():
        return here
    common = REPO / ".git"
    if common.is_file():  # a worktree: ".git" names the main repository's git dir
        gitdir = Path(common.read_text().split(":", 1)[1].strip())
        main_root = gitdir.parent.parent.parent if gitdir.parent.name == "worktrees" else gitdir.parent
        if (main_root.parent / "shared").is_dir():
            return main_root.parent / "shared"
    return here


DATA = shared_dir() / "benchmarks" / "locomo-dev" / "locomo-dev.json"
CACHE = DEFAULT_CACHE_DIR / "locomo"
SECTION = "LoCoMo turn retrieval (dev split)"
KS = (5, 10, 30)
LIMIT = 30
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
MODES = ("bm25", "vectors", "full")
MODE_LABELS = {"bm25": "BM25 alone", "vectors": "Vectors alone", "full": "Full pipeline"}


@dataclass(frozen=True)
class Turn:
    dia_id: str
    text: str
    created: datetime


@dataclass(frozen=True)
class Question:
    text: str
    evidence: tuple[str, ...]
    category: int


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


def _session_date(raw: str) -> datetime:
    return datetime.strptime(raw.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def load_split(path: Path = DATA) -> list[Conversation]:
    """The conversations of the split, or SystemExit with a plain message when the data is absent."""
    if not path.is_file():
        raise SystemExit(f"LoCoMo dev split not found at {path}: it lives outside the repository "
                         "(../shared/benchmarks/locomo-dev/); nothing to measure.")
    out = []
    for sample in json.loads(path.read_text()):
        conv = sample["conversation"]
        turns = []
        sessions = sorted((int(k.split("_")[1]), k) for k in conv if re.fullmatch(r"session_\d+", k))
        for _, key in sessions:
            created = _session_date(conv[f"{key}_date_time"])
            for t in conv[key]:
                text = f"{t['speaker']}: {t['text']}"
                if t.get("blip_caption"):
                    text += f" [shares {t['blip_caption']}]"
                turns.append(Turn(dia_id=t["dia_id"], text=text, created=created))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = tuple(e for e in qa.get("evidence", []) if e in known)
            if qa.get("category") in CATEGORIES and evidence:
                questions.append(Question(text=qa["question"], evidence=evidence, category=qa["category"]))
        out.append(Conversation(sample_id=sample["sample_id"], turns=tuple(turns), questions=tuple(questions)))
    return out


def folds(convs: list[Conversation], n: int) -> list[list[str]]:
    """Conversation ids split into n folds (round robin in split order; n = number of conversations: one each)."""
    n = max(1, min(n, len(convs)))
    return [[c.sample_id for c in convs[i::n]] for i in range(n)]


# ---------------------------------------------------------------------------
# Stores (one per conversation, cached per model)
# ---------------------------------------------------------------------------

def setup_django(base: Path, *, embedder: str | None = None, model: str | None = None,
                 database_url: str | None = None) -> None:
    """Django for the bench: settings from a scratch home; the model folder shared by every store; the engine is
    SQLite unless `database_url` names a PostgreSQL server."""
    base.mkdir(parents=True, exist_ok=True)
    os.environ["ORMAH_HOME"] = str(base / "_home")
    os.environ["ORMAH_MODEL_CACHE_DIR"] = str(DEFAULT_CACHE_DIR / "models")
    os.environ.pop("ORMAH_DB_PATH", None)
    os.environ.pop("ORMAH_DATABASE_URL", None)
    if database_url:
        os.environ["ORMAH_DATABASE_URL"] = database_url
    if embedder:
        os.environ["ORMAH_EMBEDDER"] = embedder
    if model:
        os.environ["ORMAH_EMBEDDING_MODEL"] = model
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    os.environ.setdefault("ORMAH_LOG_LEVEL", "WARNING")
    import django

    django.setup()


def use_store(home: Path, database: str | None = None) -> None:
    """Point the services and the index connection at one store's home (migrating a new one); on PostgreSQL the
    index is the server's database `database` instead of the home's file."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    home.mkdir(parents=True, exist_ok=True)
    connections["default"].close()
    connections["default"].settings_dict["NAME"] = database or str(home / "index.sqlite3")
    ormah = dict(settings.ORMAH)
    ormah.update(HOME=home, MEMORY_DIR=home / "memory", TOKEN_FILE=home / "api_token")
    settings.ORMAH = ormah
    call_command("migrate", verbosity=0, interactive=False)


def model_slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)


def build_store(conv: Conversation, home: Path, database: str | None = None) -> dict[str, int]:
    """The store of one conversation (built once, then reused): dia_id -> index row id."""
    marker = home / "built.json"
    if marker.is_file():
        use_store(home, database)
        return json.loads(marker.read_text())
    use_store(home, database)
    from memory.domain.requests import NodeCreate
    from memory.models import NodeRow
    from memory.services import nodes_remember

    started = time.perf_counter()
    items = [(NodeCreate(content=t.text, created=t.created, source="bench:locomo"), None) for t in conv.turns]
    results = nodes_remember(items=items, auto_link=False)
    uids = {r.node.id: t.dia_id for r, t in zip(results, conv.turns)}
    rows = dict(NodeRow.objects.filter(uid__in=list(uids)).values_list("uid", "id"))
    keymap = {uids[uid]: row_id for uid, row_id in rows.items()}
    marker.write_text(json.dumps(keymap))
    print(f"  built {conv.sample_id}: {len(keymap)} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return keymap


class CachedQueries:
    """The configured embedder with query vectors kept in a file (documents go straight to the model)."""

    def __init__(self, inner, path: Path) -> None:
        import numpy as np

        self.inner, self.path, self.model_id, self.dim = inner, path, inner.model_id, inner.dim
        self._np = np
        self.cache: dict[str, list[float]] = json.loads(path.read_text()) if path.is_file() else {}
        self.dirty = False
        self.embed_seconds: list[float] = []

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str):
        if text not in self.cache:
            started = time.perf_counter()
            vec = self.inner.embed_query(text)
            self.embed_seconds.append(time.perf_counter() - started)
            self.cache[text] = [float(x) for x in vec]
            self.dirty = True
        return self._np.asarray(self.cache[text], dtype=self._np.float32)

    def save(self) -> None:
        if self.dirty:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.cache))
            os.replace(tmp, self.path)
            self.dirty = False


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
        ) -> tuple[dict[str, dict[str, int]], dict[str, ConvResult], CachedQueries]:
    """Build (or reuse) every store and rank every question; returns keymaps, results and the query cache.
    With `database_url` (a PostgreSQL server) each store is built afresh in its own database there; `fresh`
    builds the SQLite stores afresh in temporary homes instead of reusing the cached ones."""
    setup_django(CACHE, embedder=embedder_path, model=model, database_url=database_url)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the section in docs/benchmarks.md")
    parser.add_argument("--embedder", help="dotted path of the Embedder class (default: the configured one)")
    parser.add_argument("--model", help="embedding model name passed to the embedder")
    parser.add_argument("--json", type=Path, help="also write the summary as JSON here")
    parser.add_argument("--baseline", type=Path, help="a --json summary of an earlier run: its full pipeline row "
                                                      "and latency are shown beside this run's")
    parser.add_argument("--baseline-label", default="Full pipeline before")
    parser.add_argument("--database-url", help="build every store on this PostgreSQL server instead of SQLite, each "
                        "in a fresh database dropped afterwards (scripts/pg-cluster.sh prints a throwaway one's URL)")
    parser.add_argument("--fresh", action="store_true", help="build the SQLite stores afresh in temporary homes "
                        "(not cached), as --database-url always does")
    args = parser.parse_args(argv)
    if args.database_url and args.write:
        parser.error("--write replaces the SQLite section; PostgreSQL figures go to docs/benchmarks.md through "
                     "`python -m bench.pg_beside`")
    convs = load_split()
    cpu = time.process_time()
    keymaps, results, embedder = run(convs, embedder_path=args.embedder, model=args.model,
                                     database_url=args.database_url, fresh=args.fresh)
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
        f"{summary['n']['overall']} questions), model {embedder.model_id}, limit {LIMIT}.", "", table, "",
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
        from bench._common import replace_section

        replace_section(SECTION, text, machine_md="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
