"""The recall-quality harness: load the labelled dataset through the real services, rank every query four ways
(BM25 alone, vectors alone, RRF of the two, the full pipeline) and score recall@5, recall@10 and MRR.

Django must be set up before this module is imported (bench/recall_quality.py does it for the CLI; the test
suite's settings do it for tests/search/test_recall_quality.py). Every ranking comes from the pipeline's public
functions in memory.search; nothing here re-implements them.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from memory.domain.enums import EdgeType
from memory.domain.requests import NodeCreate, NodePatch
from memory.domain.scoring import RecallConf
from memory.domain.search import SearchQuery
from memory.domain.text import is_question
from memory.models import NodeRow
from memory.search import Filters, fts_search, fuse, query_vector, recall, vector_search
from memory.services import edge_create, node_create, node_update, self_ensure

DATASET = Path(__file__).with_name("dataset.json")
MODES = ("bm25", "vectors", "fused", "full")
MODE_LABELS = {"bm25": "BM25 alone", "vectors": "Vectors alone", "fused": "Fused (RRF, no scorer or activation)",
               "full": "Full pipeline"}
CATEGORIES = ("paraphrase", "keyword", "identity", "temporal", "project", "edge")
LIMIT = 10
SOURCE = "bench:recall"


@dataclass(frozen=True)
class Query:
    """One labelled query; `bridge` is the edge category's linking memory (from the note)."""

    id: str
    text: str
    category: str
    relevant: tuple[str, ...]
    space: str | None
    bridge: str | None = None


@dataclass(frozen=True)
class Dataset:
    """The labelled set: memories and edges as plain dicts, queries as Query values, the fixed clock."""

    now: datetime
    self_name: str
    memories: tuple[dict, ...]
    edges: tuple[dict, ...]
    queries: tuple[Query, ...]


@dataclass
class Score:
    """Running sums of recall@5, recall@10 and reciprocal rank over some queries."""

    n: int = 0
    recall5: float = 0.0
    recall10: float = 0.0
    mrr: float = 0.0

    def add(self, ranked: Sequence[str], relevant: Iterable[str]) -> None:
        """Add one query's ranking (keys, best first) against its relevant keys."""
        relevant = set(relevant)
        self.n += 1
        self.recall5 += len(relevant & set(ranked[:5])) / len(relevant)
        self.recall10 += len(relevant & set(ranked[:10])) / len(relevant)
        self.mrr += next((1.0 / i for i, key in enumerate(ranked[:LIMIT], start=1) if key in relevant), 0.0)

    def mean(self) -> tuple[float, float, float]:
        """(recall@5, recall@10, MRR) averaged over the queries."""
        return (self.recall5 / self.n, self.recall10 / self.n, self.mrr / self.n) if self.n else (0.0, 0.0, 0.0)


@dataclass
class Report:
    """Scores per mode and category, and the rankings they came from."""

    scores: dict[str, dict[str, Score]] = field(default_factory=dict)  # mode -> category ("all" too) -> score
    rankings: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # mode -> query id -> keys

    def overall(self, mode: str) -> tuple[float, float, float]:
        """(recall@5, recall@10, MRR) of a mode over every query."""
        return self.scores[mode]["all"].mean()


def _time(value: str | None) -> datetime | None:
    return None if value is None else datetime.fromisoformat(value.replace("Z", "+00:00"))


def load_dataset(path: Path = DATASET) -> Dataset:
    """The labelled dataset (bench/recall/README.md)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    queries = []
    for q in data["queries"]:
        note = q.get("note") or ""
        bridge = note.split("bridge: ", 1)[1].split()[0].strip(".,;()") if "bridge: " in note else None
        queries.append(Query(q["id"], q["query"], q["category"], tuple(q["relevant"]), q.get("space"), bridge))
    return Dataset(now=_time(data["now"]), self_name=data["self"]["name"], memories=tuple(data["memories"]),
                   edges=tuple(data["edges"]), queries=tuple(queries))


def dataset_slice(ds: Dataset, *, per_category: Mapping[str, int], memories: int) -> Dataset:
    """A deterministic sub-dataset: the first queries of each category, their answers (and bridges, and what
    their answers evolved from), then other memories evenly spread over the rest, up to `memories`; edges between
    kept ones."""
    queries = tuple(q for c in CATEGORIES for q in [q for q in ds.queries if q.category == c][: per_category.get(c, 0)])
    keep: dict[str, None] = {}
    for q in queries:
        keep.update(dict.fromkeys([*q.relevant, *([q.bridge] if q.bridge else [])]))
    for e in ds.edges:
        if e["edge"] == EdgeType.EVOLVED_FROM and e["source"] in keep:
            keep[e["target"]] = None
    others = [m["key"] for m in sorted(ds.memories, key=lambda m: m["key"]) if m["key"] not in keep]
    needed = max(0, memories - len(keep))
    if needed:
        stride = len(others) / needed
        keep.update(dict.fromkeys(others[int(i * stride)] for i in range(needed)))
    kept = tuple(m for m in ds.memories if m["key"] in keep)
    edges = tuple(e for e in ds.edges if e["source"] in keep and e["target"] in keep)
    return replace(ds, memories=kept, edges=edges, queries=queries)


def seed(ds: Dataset, *, auto_link: bool = True) -> dict[str, str]:
    """Write every memory, edge and outdated mark through the services; returns dataset key -> node id."""
    first = min(_time(m["created"]) for m in ds.memories)
    self_ensure(name=ds.self_name, now=first)
    keymap: dict[str, str] = {}
    for m in sorted(ds.memories, key=lambda m: m["created"]):
        created = _time(m["created"])
        request = NodeCreate(
            content=m["content"], title=m.get("title"), type=m["type"], tier=m["tier"], space=m.get("space"),
            tags=m.get("tags") or [], about_self=bool(m.get("about_self")), confidence=m.get("confidence", 1.0),
            created=created, source=SOURCE,
        )
        keymap[m["key"]] = node_create(request=request, now=created, auto_link=auto_link).node.id
    for e in ds.edges:
        edge_create(source_ref=keymap[e["source"]], target_ref=keymap[e["target"]], edge=EdgeType(e["edge"]),
                    weight=e.get("weight", 0.5), reason=e.get("reason"))
    for m in ds.memories:
        if m.get("valid_until"):
            until = _time(m["valid_until"])
            node_update(ref=keymap[m["key"]], patch=NodePatch(valid_until=until), now=until)
    return keymap


def rank_all(ds: Dataset, keymap: Mapping[str, str], *, conf: RecallConf = RecallConf(),
             modes: Sequence[str] = MODES) -> dict[str, dict[str, list[str]]]:
    """mode -> query id -> ranked dataset keys (top 10) for every query."""
    key_of = {uid: key for key, uid in keymap.items()}
    uid_of_row = dict(NodeRow.objects.values_list("id", "uid"))

    def keys(row_ids: Iterable[int]) -> list[str]:
        return [key_of.get(uid_of_row.get(r, ""), "?") for r in row_ids][:LIMIT]

    active = Filters(active_at=ds.now)
    pool = LIMIT * conf.pool_factor
    out: dict[str, dict[str, list[str]]] = {m: {} for m in modes}
    for q in ds.queries:
        fts = [h.row_id for h in fts_search(q.text, pool, active)]
        vector = query_vector(q.text)
        vec = [h.row_id for h in vector_search(vector, pool, active, min_cosine=conf.similarity_threshold)]
        ranked = {
            "bm25": lambda: keys(fts),
            "vectors": lambda: keys(vec),
            "fused": lambda: keys(r for r, _ in fuse(fts, vec, question=is_question(q.text), conf=conf)),
            "full": lambda: keys(h.row_id for h in recall(
                query=SearchQuery(query=q.text, limit=LIMIT, default_space=q.space), now=ds.now, conf=conf)),
        }
        for mode in modes:
            out[mode][q.id] = ranked[mode]()
    return out


def score(ds: Dataset, rankings: Mapping[str, Mapping[str, list[str]]]) -> Report:
    """recall@5, recall@10 and MRR per mode, overall and per category."""
    report = Report(rankings={m: dict(r) for m, r in rankings.items()})
    for mode, by_query in rankings.items():
        table: dict[str, Score] = defaultdict(Score)
        for q in ds.queries:
            table["all"].add(by_query[q.id], q.relevant)
            table[q.category].add(by_query[q.id], q.relevant)
        report.scores[mode] = dict(table)
    return report


def evaluate(ds: Dataset, keymap: Mapping[str, str], *, conf: RecallConf = RecallConf()) -> Report:
    """Rank every query four ways and score them."""
    return score(ds, rank_all(ds, keymap, conf=conf))


def render_markdown(report: Report, ds: Dataset) -> str:
    """The overall table and the per-category recall@10 / MRR table."""
    lines = ["| mode | recall@5 | recall@10 | MRR |", "|---|---:|---:|---:|"]
    for mode in report.scores:
        r5, r10, mrr = report.overall(mode)
        lines.append(f"| {MODE_LABELS[mode]} | {r5:.3f} | {r10:.3f} | {mrr:.3f} |")
    cats = [c for c in CATEGORIES if any(q.category == c for q in ds.queries)]
    counts = {c: sum(1 for q in ds.queries if q.category == c) for c in cats}
    lines += ["", "recall@10 / MRR per category:", "",
              "| mode | " + " | ".join(f"{c} ({counts[c]})" for c in cats) + " |",
              "|---|" + "---:|" * len(cats)]
    for mode, table in report.scores.items():
        cells = [f"{table[c].mean()[1]:.2f} / {table[c].mean()[2]:.2f}" for c in cats]
        lines.append(f"| {MODE_LABELS[mode]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def misses(report: Report, ds: Dataset, mode: str = "full") -> list[str]:
    """One line per query whose relevant memories are not all in the mode's top 10."""
    out = []
    for q in ds.queries:
        ranked = report.rankings[mode][q.id]
        lost = [k for k in q.relevant if k not in ranked]
        if lost:
            out.append(f"{q.id} [{q.category}] {q.text!r}: missing {', '.join(lost)}; got {', '.join(ranked[:5])}")
    return out
