"""The labelled candidate pools bench/fit_scorer.py fits the recall scorer on (dev splits only).

Every pool is exactly what recall scores for one query (`memory.search.recall_pool`), labelled:

* LoCoMo dev conversations (../shared/benchmarks/locomo-dev, one store each, see bench/locomo.py): questions;
* the project's own set (bench/recall/dataset.json, its dev half by the fixed-seed split of
  bench/datasets/split.py) and the dev splits of bench/datasets/ (lifelog, devprojects, docs, club): questions;
* whisper (bench/datasets/whisper.json, dev split): prompts an agent receives while its user works, most of them
  tasks and statements, not questions. The four stores (docs, lifelog, devprojects, club) are loaded into one home
  as bench/whisper_stores.py does; each dev prompt (its history first, in one session; a batch in FRESH_BATCHES
  is measured, never fitted; v5 took batches 1-10) goes through the real whisper_respond once, and every SearchQuery whisper
  hands recall for the final prompt is kept (its project space, tiers and limit included).
  Expected memories are relevant, accepted ones are left out of the fit (weight 0), the rest are not relevant;
  the pools of should-stay-silent prompts are all negatives.

Every pool names its store (`Pool.store`: locomo, recall, docs, lifelog, devprojects, club; a whisper pool the store
of its prompt's expected memories, "none" for a prompt about nothing stored, as bench/whisper_gate_fit.group_of) and
a whisper pool its labelling round (`Pool.batch`), for the leave-one-store-out and leave-one-batch-out figures of
bench/fit_scorer.py.

Off-topic queries (the stores' `offtopic` dev queries, nonsense strings, questions of one LoCoMo conversation asked
of another) only set the "no good match" threshold. Test halves are never read here. Pools are cached per model and
version of the code and the labelled sets (CODE) under ~/.cache/ormah-bench/fit/.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from bench import locomo
from bench._common import DEFAULT_CACHE_DIR, REPO
from bench.datasets import loader
from bench.whisper_gate_fit import FRESH_BATCHES, group_of
from memory.ranking.features import FEATURES

FIT_CACHE = DEFAULT_CACHE_DIR / "fit"
NOW = datetime(2026, 11, 23, tzinfo=UTC)
CODE = ("memory/ranking/features.py", "memory/search/candidates.py", "memory/search/centroid.py",
        "memory/search/pipeline.py",
        "memory/domain/temporal.py", "memory/search/fts.py", "memory/search/semantic.py", "memory/search/matrix.py",
        "memory/domain/chunking.py", "memory/index_vectors.py",
        # the labelled sets and the query whisper builds: a prompt added to a dev split must reach the pools
        "bench/datasets/whisper.json", "bench/datasets/docs.json", "bench/datasets/lifelog.json",
        "bench/datasets/devprojects.json", "bench/datasets/club.json", "bench/datasets/home.json",
        "bench/datasets/course.json", "bench/datasets/choir.json",
        "bench/datasets/split.py",
        "whisper/stages/retrieve.py", "bench/scorer_pools.py")
NONSENSE = ("zzqxv blorf", "qwpl xkcdz vrrmt", "blorf glimmax snoodle", "asdf jkl qwerty uiop", "fnord zibble")
# Asked of the labelled stores too; none is the text of a test query there ("zzqxv blorf" is one, in docs).
STORE_NONSENSE = ("qwpl xkcdz vrrmt", "blorf glimmax snoodle", "fnord zibble", "wibbet grontle spax")
# the runnable stores (loader.SEALED_STORES left out), in the order the pools were first built
STORES = tuple(sorted(loader.STORES, key=("lifelog", "devprojects", "docs", "club", *loader.STORES).index))
FOLDS = 5
WHISPER_EMBEDDER = "bench.datasets.embed_cache.CachedEmbedder"  # the real model, document vectors kept on disk


@dataclass
class Pool:
    """One query's candidates: features, labels, and how many relevant memories the query has in all."""

    set: str
    fold: int
    category: str
    matrix: np.ndarray
    labels: np.ndarray
    n_relevant: int
    vocabulary: float = 1.0  # share of the query's words the store holds (CandidatePool.vocabulary)
    best_cos: float = 0.0
    windowed: bool = False
    key: str = ""  # the query or prompt id (a whisper prompt can make two recall calls)
    accepted: np.ndarray | None = None  # whisper: rows that are fine to inject but not the answer (not fitted)
    weight: float = 1.0  # weight of each of its rows in the fit
    store: str = ""  # the store it asks about (leave-one-store-out)
    batch: int = 0  # a whisper prompt's labelling round (leave-one-batch-out); 0 for questions

    def unknown_words(self, cosine: float) -> bool:
        """memory.search.pipeline.unknown_words for this pool at a given unknown_words_cosine."""
        return self.vocabulary == 0.0 and not self.windowed and self.best_cos < cosine

    def row_weights(self) -> np.ndarray:
        w = np.full(len(self.labels), self.weight)
        if self.accepted is not None:
            w[self.accepted & ~self.labels] = 0.0
        return w

    @property
    def good(self) -> np.ndarray:
        """Relevant or accepted rows."""
        return self.labels if self.accepted is None else self.labels | self.accepted


def code_hash() -> str:
    h = hashlib.sha256()
    for rel in CODE:
        h.update((REPO / rel).read_bytes())
    return h.hexdigest()[:12]


def fold_of(key: str) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest(), 16) % FOLDS


def _pool(query, now, embedder, relevant: set[int], set_name: str, fold: int, category: str, key: str = "",
          accepted: set[int] = frozenset(), store: str = "", batch: int = 0) -> Pool:
    from memory.search import recall_pool

    pool = recall_pool(query=query, now=now, embedder=embedder)
    if pool is None or not pool.row_ids:
        return Pool(set_name, fold, category, np.zeros((0, len(FEATURES))), np.zeros(0, dtype=bool), len(relevant),
                    key=key, store=store or set_name, batch=batch)
    labels = np.array([r in relevant for r in pool.row_ids], dtype=bool)
    acc = np.array([r in accepted for r in pool.row_ids], dtype=bool) if accepted else None
    return Pool(set_name, fold, category, pool.matrix, labels, len(relevant), pool.vocabulary, pool.best_cosine,
                pool.windowed, key, acc, store=store or set_name, batch=batch)


def locomo_pools(embedder) -> tuple[list[Pool], list[Pool]]:
    """Answerable pools (one fold per conversation) and off-topic pools (another conversation's questions)."""
    from memory.domain.search import SearchQuery

    convs = locomo.load_split()
    answerable, offtopic = [], []
    for i, conv in enumerate(convs):
        base = locomo.CACHE / locomo.model_slug(embedder.model_id)
        keymap = locomo.build_store(conv, base / conv.sample_id)
        for q in conv.questions:
            answerable.append(_pool(SearchQuery(query=q.text, limit=locomo.LIMIT), NOW, embedder,
                                    {keymap[e] for e in q.evidence}, f"locomo:{conv.sample_id}", i % FOLDS,
                                    locomo.CATEGORIES[q.category], store="locomo"))
        other = convs[(i + 1) % len(convs)]
        for q in other.questions[::8]:
            offtopic.append(_pool(SearchQuery(query=q.text, limit=10), NOW, embedder, set(), "locomo-cross", i,
                                  "offtopic"))
        for text in NONSENSE:
            offtopic.append(_pool(SearchQuery(query=text, limit=10), NOW, embedder, set(), "nonsense", i,
                                  "offtopic"))
    return answerable, offtopic


def labelled_pools(embedder) -> tuple[list[Pool], list[Pool]]:
    """Dev-split pools of the project's own set and of bench/datasets (folds by query id)."""
    from bench.datasets.loader import DatasetUnavailable, load_store, to_recall_dataset
    from bench.datasets.split import assign_splits
    from bench.recall import harness
    from memory.domain.search import SearchQuery
    from memory.models import NodeRow

    answerable, offtopic = [], []
    sets = [("recall", harness.load_dataset(), None)]
    for name in STORES:
        try:
            store = load_store(name)
        except (DatasetUnavailable, FileNotFoundError) as exc:
            print(f"  skipped {name}: {exc}", file=sys.stderr)
            continue
        sets.append((name, None, store))
    for name, ds, store in sets:
        home = FIT_CACHE / locomo.model_slug(embedder.model_id) / name
        if store is not None:
            queries = [(q.id, q.text, q.category, q.relevant, q.space) for q in store.queries_in("dev")]
            ds = to_recall_dataset(store, split=None)
        else:
            split = assign_splits("recall", [{"id": q.id, "category": q.category} for q in ds.queries])
            queries = [(q.id, q.text, q.category, q.relevant, q.space) for q in ds.queries if split[q.id] == "dev"]
        marker = home / "built.json"
        locomo.use_store(home)
        if marker.is_file():
            keymap = json.loads(marker.read_text())
        else:
            uids = harness.seed(ds)
            rows = dict(NodeRow.objects.values_list("uid", "id"))
            keymap = {key: rows[uid] for key, uid in uids.items() if uid in rows}
            marker.write_text(json.dumps(keymap))
        for qid, text, category, relevant, space in queries:
            rel = {keymap[k] for k in relevant if k in keymap}
            pool = _pool(SearchQuery(query=text, limit=10, default_space=space), ds.now, embedder, rel, name,
                         fold_of(f"{name}:{qid}"), category, key=qid)
            (answerable if rel else offtopic).append(pool)
        if store is not None:
            for text in STORE_NONSENSE:
                offtopic.append(_pool(SearchQuery(query=text, limit=10), ds.now, embedder, set(), "nonsense",
                                      fold_of(f"{name}:{text}"), "offtopic"))
    return answerable, offtopic


def _whisper_calls(prompts, now: datetime) -> dict[str, list[dict]]:
    """prompt id -> the SearchQuery (as JSON) of every recall call whisper_respond makes for the final prompt
    (after the prompt's history, in one session, as bench.whisper_quality.run_prompt runs it)."""
    import whisper.services.respond as respond
    from whisper.services import whisper_respond

    calls: list[dict] = []
    original = respond.recall

    def recording(*, query, **kwargs):
        calls.append(query.model_dump(mode="json"))
        return original(query=query, **kwargs)

    out = {}
    respond.recall = recording
    try:
        for p in prompts:
            session, history = f"fit-{p['id']}", p.get("history", [])
            for i, earlier in enumerate(history):
                whisper_respond(prompt=earlier, session_id=session, space=p.get("space"),
                                now=now - timedelta(seconds=30 * (len(history) - i)))
            calls.clear()
            whisper_respond(prompt=p["prompt"], session_id=session, space=p.get("space"), now=now)
            out[p["id"]] = list(calls)
    finally:
        respond.recall = original
    return out


def fit_prompts(prompts, fresh: bool = False) -> list[dict]:
    """The dev prompts the fit reads (no batch of FRESH_BATCHES), or with `fresh` only those of FRESH_BATCHES: scored
    by the fitted scorer, never fitted (bench/fit_scorer.py's transfer line). Sealed batches never come in
    (WhisperSet.prompts_in)."""
    return [p for p in prompts if (p.get("batch", 1) in FRESH_BATCHES) == fresh]


def whisper_pools(embedder, fresh: bool = False) -> tuple[list[Pool], list[Pool]]:
    """Pools of the recall calls whisper makes for the dev scenarios: (should-inject, should-stay-silent); with
    `fresh`, those of the dev prompts of FRESH_BATCHES instead (see fit_prompts)."""
    from bench.datasets.loader import load_whisper
    from bench.whisper_stores import seed_stores
    from memory.domain.search import SearchQuery
    from memory.models import NodeRow

    scenarios = load_whisper()
    prompts = fit_prompts(scenarios.prompts_in("dev"), fresh)
    home = FIT_CACHE / locomo.model_slug(embedder.model_id) / \
        f"whisper{'-fresh' if fresh else ''}-{code_hash()}"  # new prompts: new calls
    marker = home / "built.json"
    locomo.use_store(home)
    if marker.is_file():
        built = json.loads(marker.read_text())
    else:
        uids, _ = seed_stores()
        rows = dict(NodeRow.objects.values_list("uid", "id"))
        built = {"keymap": {key: rows[uid] for key, uid in uids.items() if uid in rows},
                 "calls": _whisper_calls(prompts, scenarios.now)}
        marker.write_text(json.dumps(built))
    keymap, calls = built["keymap"], built["calls"]
    inject, silent = [], []
    for p in prompts:
        expect = {keymap[k] for k in p.get("expect", []) if k in keymap}
        accept = {keymap[k] for k in p.get("accept", []) if k in keymap}
        for q in calls.get(p["id"], []):
            pool = _pool(SearchQuery.model_validate(q), scenarios.now, embedder, expect, "whisper",
                         fold_of(f"whisper:{p['id']}"), p["category"], key=p["id"], accepted=accept,
                         store=group_of(p, "store"), batch=p.get("batch", 1))
            (inject if p["kind"] == "inject" and expect else silent).append(pool)
    return inject, silent


def collect(refresh: bool = False, embedder: str = WHISPER_EMBEDDER,
            ) -> tuple[list[Pool], list[Pool], list[Pool], list[Pool], list[Pool], str]:
    """(answerable question pools, off-topic pools, whisper should-inject pools, whisper silent pools, the fresh
    batches' should-inject pools (never fitted), model id), with the embedder class at the dotted path `embedder`
    (by default the real MiniLM-L6 with cached documents)."""
    locomo.setup_django(locomo.CACHE, embedder=embedder)
    from memory import runtime

    inner = runtime.embedder()
    base = locomo.CACHE / locomo.model_slug(inner.model_id)
    base.mkdir(parents=True, exist_ok=True)
    embedder = locomo.CachedQueries(inner, base / "queries.json")
    parts = []
    for name, build in (("locomo", locomo_pools), ("labelled", labelled_pools), ("whisper", whisper_pools),
                        ("whisper-fresh", lambda e: whisper_pools(e, fresh=True))):
        cache = FIT_CACHE / locomo.model_slug(inner.model_id) / f"{name}-{code_hash()}.pkl"
        if cache.is_file() and not refresh:
            parts.append(pickle.loads(cache.read_bytes()))
            continue
        parts.append(build(embedder))
        embedder.save()
        cache.parent.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps(parts[-1]))
    (a1, o1), (a2, o2), (wi, ws), (fresh, _) = parts
    return a1 + a2, o1 + o2, wi, ws, fresh, inner.model_id
