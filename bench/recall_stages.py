"""Where a recall's time goes: the recall latency bench's stage pass (bench/recall_latency.py).

Each stage of STAGES is wrapped in a timer where its caller looks it up, the queries run once more, and the mean
wall ms per recall of each stage comes back with how many times it ran. A stage the pipeline no longer has, or
no longer calls where the bench wraps it, stops the bench (StageMissing; tests/search/test_latency_stages.py).
"""

from __future__ import annotations

import importlib
import time

from bench.recall.synthetic import NOW

# (module, function, label, parent): each stage is timed where its caller looks it up; a stage with a parent is part
# of it (shown as "· label"), so the top-level rows, with "rest", add up to the total. A name a module no longer
# has stops the bench (StageMissing): a renamed stage can never drop out of the table silently again.
STAGES = (
    ("memory.search.pipeline", "query_vector", "query_vector (MiniLM, LRU cleared)", None),
    ("memory.search.pipeline", "gather", "candidate pool", None),
    ("memory.search.candidates", "fts_search", "fts_search (AND, then OR when short)", "candidate pool"),
    ("memory.search.candidates", "vector_search", "vector_search", "candidate pool"),
    ("memory.search.candidates", "feature_rows", "feature_rows", "candidate pool"),
    ("memory.search.candidates", "cosine_map", "cosine_map (+ centrality)", "candidate pool"),
    ("memory.search.candidates", "doc_counts", "doc_counts", "candidate pool"),
    ("memory.search.candidates", "feature_matrix", "feature_matrix", "candidate pool"),
    ("memory.search.pipeline", "_direct", "scoring (scorer, no good match, floor)", None),
    ("memory.search.pipeline", "temporal_supplement", "temporal_supplement", None),
    ("memory.search.pipeline", "spread_activation", "spread_activation", None),
    ("memory.search.pipeline", "hit_rows", "hit_rows", None),
    ("memory.search.pipeline", "with_passages", "with_passages", None),
    ("memory.search.pipeline", "hits_with_warnings", "hits_with_warnings", None),
    ("memory.context.warnings", "trust_facts", "trust_facts", "hits_with_warnings"),
    ("memory.context.warnings", "known_events", "known_events", "hits_with_warnings"),
    ("memory.context.warnings", "node_labels", "node_labels", "hits_with_warnings"),
    ("memory.context.warnings", "outdated_uids", "outdated_uids", "hits_with_warnings"),
)
# Stages a recall calls only for some queries or stores: a time-only query, a hit citing evidence or in a relation.
OPTIONAL_STAGES = frozenset({"temporal_supplement", "known_events", "node_labels", "outdated_uids"})
REST = "rest (plan, merge, hit objects)"


class StageMissing(LookupError):
    """A stage of STAGES names a function its module no longer has (the pipeline changed; update STAGES)."""


def stage_rows() -> list[tuple[str, str | None]]:
    """(row label, parent label) in table order: each parent, its parts, then its unaccounted rest."""
    rows: list[tuple[str, str | None]] = []
    for _, _, label, parent in STAGES:
        if parent is None:
            rows.append((label, None))
            children = [(child, label) for _, _, child, p in STAGES if p == label]
            if children:
                rows += children + [(f"rest of {label}", label)]
    return rows + [(REST, None), ("total", None)]


def time_stages(qs, emb, real=None) -> tuple[dict[str, float], dict[str, int]]:
    """Mean wall ms per recall spent in each stage and how many times each ran (a separate pass with the stages
    wrapped in timers; the query LRU is cleared first, so the embedding counts as in the measured pass)."""
    from memory.search import pipeline

    originals = []
    for module_name, name, label, _ in STAGES:
        module = importlib.import_module(module_name)
        if not callable(getattr(module, name, None)):
            raise StageMissing(f"{module_name}.{name} (stage {label!r}) does not exist any more")
        originals.append((module, name, label, getattr(module, name)))
    spent = {label: 0.0 for *_, label, _ in originals}
    calls = {label: 0 for label in spent}

    def timed(label, fn):
        def run(*args, **kwargs):
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - started
                calls[label] += 1
        return run

    getattr(real, "_queries", {}).clear()
    for module, name, label, fn in originals:
        setattr(module, name, timed(label, fn))
    try:
        t = time.perf_counter()
        for q in qs:
            pipeline.recall(query=q, now=NOW, embedder=emb)
        total = time.perf_counter() - t
    finally:
        for module, name, _, fn in originals:
            setattr(module, name, fn)
    never = [label for label, n in calls.items() if n == 0 and label not in OPTIONAL_STAGES]
    if never:
        raise StageMissing(f"stages never called by recall (their caller no longer looks them up there): {never}")
    out = {label: ms * 1000 / len(qs) for label, ms in spent.items()}
    for _, _, label, _ in STAGES:
        children = [child for _, _, child, parent in STAGES if parent == label]
        if children:
            out[f"rest of {label}"] = out[label] - sum(out[c] for c in children)
    out["total"] = total * 1000 / len(qs)
    out[REST] = out["total"] - sum(out[label] for _, _, label, parent in STAGES if parent is None)
    return out, calls
