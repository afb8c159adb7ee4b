"""The candidate pool of one query and its feature matrix (the scorer's input).

Candidates come from the keyword leg (BM25), the vector leg (nearest by cosine) and, when the query names a time,
the memories of that window nearest to the query (time is a preference: they join the pool, the `window` feature
weighs them, nothing outside is removed). Every candidate then gets its real cosine and its centrality from its
stored vector, so both legs' candidates are measured the same way.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.db import connection

from memory.backends import backend

from memory.domain.lifecycle import days_between
from memory.domain.text import STOP_WORDS, words
from memory.ranking.features import Candidate, QueryFacts, feature_matrix, idf, query_facts, query_terms
from memory.search import vectors
from memory.search.centroid import centrality, centroid
from memory.search.filters import Filters
from memory.search.fts import fts_search
from memory.search.rows import FeatureRow, feature_rows
from memory.search.semantic import cosine_map, vector_search

DF_CAP = 5000  # document counts above this are treated as this (the IDF of such a word is near its floor anyway)
NEUTRAL_CENTRALITY = 0.5  # a store of one memory (no others to be near)

_central: dict[tuple, dict[int, float]] = {}  # centrality per row, per store signature (derived, per process)
_counts: dict[tuple, int] = {}  # the number of memories, for the latest store state seen
_DF_LOCK = threading.Lock()  # the web worker's threads share the cache
# The counts kept per process: at most DF_CACHE_TERMS terms (all dropped when one more would pass it), none longer
# than DF_TERM_CHARS characters (counted at each call). Every prompt brings new terms, its adjacent word pairs above
# all (`with_compounds`), so the cache fills whatever the store: ~1.1 new terms a request under the soak's mix, ~330
# bytes a term with its key, its token's set and the term itself (docs/benchmarks.md, "Served memory over time,
# session 26"). 8,192 terms are ~2.7 MiB a web worker; 50,000 were ~16 MiB, reached after ~45,000 requests.
DF_CACHE_TERMS = 8_192
DF_TERM_CHARS = 64
# Stores up to this many memories get each row's indexed words' digest kept beside the counts (`_carried`): an older
# memory written again (a confidence change) beside a new one then carries the counts; larger stores count afresh.
TEXTS_MAX = 50_000
TEXTS_SLACK = 1_000  # deleted rows' digests kept before every row is read again


@dataclass(frozen=True)
class CandidatePool:
    """The candidates of one query, their features (rows aligned with row_ids) and how each leg ranked them."""

    row_ids: list[int]
    matrix: np.ndarray
    fts_rank: dict[int, int]
    cosine: dict[int, float]
    vec_rank: dict[int, int]  # rank in the vector leg (absent: not found by it)
    vocabulary: float = 1.0  # share of the query's content words the store holds at all (1.0: it has none)
    windowed: bool = False  # the query named a time (its window, not its words, may be the topic)
    rows: dict[int, FeatureRow] = field(default_factory=dict)  # the candidates' rows, by id (hits are built from them)

    @property
    def best_cosine(self) -> float:
        """The best cosine of any candidate to the query (0.0 without vectors)."""
        return max(self.cosine.values(), default=0.0)


def vocabulary_share(terms: list[str], counts: dict[str, int]) -> float:
    """The share of a query's content words that occur in at least one memory (1.0 for a query without any)."""
    return sum(1 for t in terms if counts.get(t, 0) > 0) / len(terms) if terms else 1.0


def with_compounds(text: str, counts: Callable[[list[str]], dict[str, int]]) -> str:
    """The text and, after it, each pair of adjacent words written as one word when the store holds that word ("set
    up the project" also asks for "setup"; "pass word", "data base"). The first word of a pair is no stop word ("in
    to" is not "into"). The keyword leg and the scorer's word features read the joined words; the vector leg keeps
    the user's text."""
    raw = words(text)
    joined = [a + b for a, b in zip(raw, raw[1:]) if a not in STOP_WORDS and len(a) > 1 and len(b) > 1]
    joined = [w for w in dict.fromkeys(joined) if w not in raw]
    if not joined:
        return text
    held = counts(joined)
    found = [w for w in joined if held.get(w, 0) > 0]
    return f"{text} {' '.join(found)}" if found else text


def store_state() -> tuple:
    """What moves whenever a memory's words can change: the vector log's newest generation (every row inserted or
    deleted, every content edit: memory/search/matrix.py) and the indexer's write sequence (every indexed write,
    titles and tags included)."""
    with connection.cursor() as cur:
        cur.execute(f"SELECT (SELECT max(gen) FROM {vectors.LOG_TABLE}), "
                    "(SELECT value FROM memory_indexmetarow WHERE key = %s)", [vectors.META_SEQ_KEY])
        gen, seq = cur.fetchone()
    return str(connection.settings_dict.get("NAME")), gen, seq


@dataclass
class _Counts:
    """The document counts one process holds for one database, exact at the full-text index's `mark` (the store
    state `state` was read just before them; counts read after a state are never older than it)."""

    state: tuple
    mark: object | None  # FULLTEXT_MARK_SQL's value they are exact at (None: the engine has none; never carried)
    seq: int  # the indexer's write sequence at that mark: rows written since have a larger indexed_seq
    count: int  # memories then
    newest: int  # the largest row id then (ids are never reused)
    counts: dict[tuple[str, int], int] = field(default_factory=dict)  # (term, cap) -> min(rows holding it, cap)
    by_token: dict[str, set[tuple[str, int]]] = field(default_factory=dict)  # the index's token -> its keys
    uncarried: set[tuple[str, int]] = field(default_factory=set)  # keys not read at the mark: dropped when it moves
    texts: dict[int, int] | None = None  # row id -> `_digest` of its indexed columns at the mark (None: not read)


def _digest(title: str | None, content: str | None, tags_text: str | None) -> int:
    """What node_fts indexes of a row (its triggers write exactly these three columns), as one number."""
    return hash((title or "", content or "", tags_text or ""))


_df: dict[str, _Counts] = {}  # per database name: the latest store state's document counts


def doc_counts(terms: list[str], state: tuple | None = None, cap: int = DF_CAP) -> dict[str, int]:
    """How many memories contain each term, by the full-text index (stems), capped at `cap` (DF_CAP: the scorer's).

    Kept per process for the latest store state (`store_state`, read here unless the caller read it just before):
    a conversation repeats its words, and each count is an FTS5 scan of up to `cap` postings. When the state moves,
    the counts are carried to it where the full-text index tells exactly what changed (`_carried`): a write that
    left the indexed words alone (feedback, access) changes no count, and new memories (a remember) add theirs;
    anything else (an edit, a delete) counts afresh. Inside a transaction (a writer's own uncommitted rows) nothing
    is kept, as the vector matrix keeps nothing there either.
    """
    if connection.in_atomic_block or not terms:
        return backend().doc_counts(terms, cap)
    state = state or store_state()  # read first: counts read after it are never older than it
    with _DF_LOCK:
        held = _df.get(state[0])
        if held is None or held.state != state:
            held = _df[state[0]] = _carried(held, state)
        mark = held.mark
        out = {t: held.counts[t, cap] for t in terms if (t, cap) in held.counts}
    missing = [t for t in terms if t not in out]
    if missing:
        found, at_mark, read_at = backend().doc_counts_marked(missing, cap)
        out.update(found)
        with _DF_LOCK:
            now = _df.get(state[0])
            if now is not None and now.mark == mark and (mark is not None or now.state == state):
                _keep(now, found, cap, at_mark if read_at is not None and read_at == mark else {})
    return {t: out[t] for t in terms}


def _keep(held: _Counts, found: dict[str, int], cap: int, at_mark: dict[str, str]) -> None:
    """Keep counts read for `held`'s state: those read at its mark (term -> token) are carried across writes; the
    others (read by MATCH, or after the index moved: newer than the mark) are kept until the index next moves."""
    if len(held.counts) + len(found) > DF_CACHE_TERMS:
        held.counts.clear()
        held.by_token.clear()
        held.uncarried.clear()
    for term, n in found.items():
        if len(term) > DF_TERM_CHARS:
            continue
        key = (term, cap)
        held.counts[key] = n
        if held.mark is None:
            continue
        if term in at_mark:
            held.by_token.setdefault(at_mark[term], set()).add(key)
        else:
            held.uncarried.add(key)


def _carried(held: _Counts | None, state: tuple) -> _Counts:
    """The counts for `state`: `held`'s carried when the full-text index says exactly what changed since its mark,
    else none. One statement reads, at one moment, the index's mark, the write sequence, the memory count, the
    largest id and the rows written since `held`'s mark (their indexed columns; every row, while `held` has no
    digests of them and the store holds at most TEXTS_MAX memories):
    - the mark unchanged: no indexed word changed (the rows written since changed other columns), so every count holds;
    - every row written since is new (an id above `held.newest`) or an older row whose indexed columns are what they
      were at `held`'s mark (its digest; a confidence change rewrites the row, not its words), and the count grew by
      exactly the new rows' number (no delete): a term's count grows by the new rows holding its token (FTS5
      tokenizes them as it indexed them). A count at its cap stays there. Counts not read at the mark (a term of
      several tokens, counted by MATCH; a count read after the index had moved on) are dropped, to be counted again;
    - anything else (an older row's words edited, a delete, another database): nothing is carried."""
    sql = backend().FULLTEXT_MARK_SQL
    if sql is None:
        return _Counts(state, None, 0, 0, 0)
    since = held.seq if held is not None and held.mark is not None else None
    # every row's digest read with the mark (within TEXTS_MAX): the first time, and after a read that kept none;
    # never again while the store is larger (the OR below reads every row's indexed_seq, not its index)
    every = held is None or (held.texts is None and held.count <= TEXTS_MAX)
    with connection.cursor() as cur:
        cur.execute(f"SELECT m.mark, m.seq, m.total, m.newest, n.id, n.title, n.content, n.tags_text, n.indexed_seq "
                    f"FROM (SELECT {sql} AS mark, (SELECT value FROM memory_indexmetarow WHERE key = %s) AS seq, "
                    "(SELECT count(*) FROM memory_noderow) AS total, (SELECT max(id) FROM memory_noderow) AS newest) m "
                    f"LEFT JOIN memory_noderow n ON n.indexed_seq > %s{' OR m.total <= %s' if every else ''} "
                    "ORDER BY n.id",
                    [vectors.META_SEQ_KEY, since if since is not None else 2 ** 62, *([TEXTS_MAX] if every else [])])
        rows = cur.fetchall()
    mark, seq, total, newest = rows[0][:4]
    fresh = _Counts(state, mark, int(seq or 0), int(total), int(newest or 0))
    written = [r[4:8] for r in rows if r[4] is not None and (since is None or r[8] > since)]
    before = None if every else held.texts  # the digests at `held`'s mark
    new = [r for r in written if since is not None and r[0] > held.newest]
    words_kept = since is not None and before is not None and all(
        r[0] > held.newest or before.get(r[0]) == _digest(*r[1:]) for r in written)  # read before they are set again
    fresh.texts = _texts_now(before, rows if every else written, every, fresh.count)
    if since is None or mark is None:
        return fresh
    if mark == held.mark:
        added: dict[str, int] = {}
    elif written and fresh.seq > held.seq and fresh.count == held.count + len(new) and \
            (len(new) == len(written) or words_kept):
        added = backend().row_tokens([r[1:] for r in new])
    else:
        return fresh
    if mark != held.mark:
        for key in held.uncarried:
            held.counts.pop(key, None)
        held.uncarried.clear()
    for token, n in added.items():
        for key in held.by_token.get(token, ()):
            if key in held.counts:  # kept again since, not at the mark, and dropped just above
                held.counts[key] = min(held.counts[key] + n, key[1])
    held.state, held.mark, held.seq, held.count, held.newest = state, mark, fresh.seq, fresh.count, fresh.newest
    held.texts = fresh.texts
    return held


def _texts_now(before: dict[int, int] | None, rows: list, every: bool, count: int) -> dict[int, int] | None:
    """The rows' digests at the mark just read: every row's (`every`: `rows` is the statement's, all of them), or
    `before` (the previous mark's) with the rows written since (`rows`: id, title, content, tags_text) set again:
    a row not written since has the columns it had. None above TEXTS_MAX memories; a delete leaves its id's digest
    (ids are never reused, so it is never asked for) until the digests outnumber the memories by TEXTS_SLACK."""
    if count > TEXTS_MAX:
        return None
    if every:
        return {r[4]: _digest(*r[5:8]) for r in rows if r[4] is not None}
    if before is None or len(before) > count + TEXTS_SLACK:
        return None
    before.update((r[0], _digest(*r[1:])) for r in rows)
    return before


def memory_count(state: tuple | None = None) -> int:
    """The number of memories, kept per process for the store state read just before (every insert and delete of
    a row moves the vector log: memory/search/matrix.py); None (inside a transaction) reads it afresh."""
    if state is not None:
        with _DF_LOCK:
            if state in _counts:
                return _counts[state]
    with connection.cursor() as cur:
        cur.execute("SELECT count(*) FROM memory_noderow")
        total = int(cur.fetchone()[0])
    if state is not None:
        with _DF_LOCK:
            _counts.clear()
            _counts[state] = total
    return total


def gather(*, text: str, limit: int, filters: Filters, vector: np.ndarray | None, now: datetime,
           window: tuple[datetime, datetime | None] | None = None, default_space: str | None = None,
           pool_factor: int = 9) -> CandidatePool:
    """Candidates of both legs (limit x pool_factor each, plus the window's nearest) with their feature matrix."""
    pool = limit * pool_factor
    state = None if connection.in_atomic_block else store_state()
    total = memory_count(state)
    # The OR query fills the pool whenever AND finds fewer rows than the pool: with OR only below recall's limit, a
    # short note holding just the query's rarer word was never a keyword candidate once `limit` long pages held every
    # word ("who gets paged?" vs "pages go through Opsgenie"; docs/benchmarks.md). Its common words' counts are read
    # nearer their true size than the scorer's cap (the rare-first OR query, memory/search/fts.py).
    text = with_compounds(text, lambda terms: doc_counts(terms, state))
    fts_hits = fts_search(text, pool, filters, total=total,
                          df=lambda terms: doc_counts(terms, state, cap=max(DF_CAP, total // 4)))
    knn = [] if vector is None else vector_search(vector, pool, filters)
    ids = list(dict.fromkeys([h.row_id for h in fts_hits] + [h.row_id for h in knn]))
    if window is not None and vector is not None:
        inside = filters.with_window(max(window[0], filters.created_after or window[0]),
                                     window[1] if filters.created_before is None or window[1] is None
                                     else min(window[1], filters.created_before))
        ids += [h.row_id for h in vector_search(vector, limit * 3, inside) if h.row_id not in set(ids)]
    if not ids:
        return CandidatePool([], np.zeros((0, 0)), {}, {}, {})
    rows = feature_rows(ids)
    ids = [i for i in ids if i in rows]
    cosine: dict[int, float] = {}
    central: dict[int, float] = {}
    if vector is not None:
        cosine = cosine_map(vector, ids)
        if cosine:
            summed, sampled, sig = centroid(total, int(np.asarray(vector).shape[0]), state)
            norm = float(np.linalg.norm(summed))
            if norm > 0:
                known = _central.setdefault(sig, {})
                if len(_central) > 8:  # older centroids of this process: their values are stale
                    for key in list(_central)[:-8]:
                        del _central[key]
                missing = [r for r in cosine if r not in known]
                if missing:
                    to_sum = cosine_map(summed / norm, missing)
                    known.update(centrality(to_sum, norm, sampled, total))
                central = {r: known[r] for r in cosine if r in known}
    terms = query_terms(text)
    counts = doc_counts(terms, state)
    facts: QueryFacts = query_facts(text, {t: idf(counts.get(t, 0), total) for t in terms},
                                    default_space=default_space, window=window)
    fts = {h.row_id: h for h in fts_hits}
    candidates = []
    for row_id in ids:
        row = rows[row_id]
        hit = fts.get(row_id)
        candidates.append(Candidate(
            row_id=row_id, content=row.content, title=row.title or "", bm25=hit.score if hit else None,
            fts_rank=hit.rank if hit else None, cosine=cosine.get(row_id),
            centrality=central.get(row_id, NEUTRAL_CENTRALITY),
            created=row.created, space=row.space, confidence=row.confidence, tier=row.tier,
            access_count=row.access_count,
            days_since_access=days_between(row.last_accessed, now) if row.last_accessed else math.inf,
        ))
    return CandidatePool(
        row_ids=ids, matrix=feature_matrix(facts, candidates), fts_rank={h.row_id: h.rank for h in fts_hits},
        cosine=cosine, vec_rank={h.row_id: i for i, h in enumerate(knn, start=1)},
        vocabulary=vocabulary_share(terms, counts), windowed=window is not None, rows=rows,
    )
