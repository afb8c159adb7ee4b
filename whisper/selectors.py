"""Reads of the whisper app: identity sets, node vectors, feedback samples, the ledger."""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TypeVar

import numpy as np
from django.db import connection
from django.db.models import F, Prefetch

from memory.domain.enums import Tier
from memory.domain.requests import auto_title
from memory.domain.search import SearchHit
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.ranking.features import idf
from memory.search.candidates import doc_counts, memory_count, store_state
from memory.search.rows import as_datetime
from memory.search import matrix
from memory.search.filters import Filters
from memory.search.semantic import cosines_for, uses_matrix
from whisper.affinity import FeedbackSample
from whisper.models import AffinityRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.state import INJECTED, SILENT_SYNTHETIC

IDENTITY_LIMIT = 200
IDENTITY_FIELDS = ("id", "uid", "short_id", "title", "content", "type", "tier", "space", "tags_text", "created",
                   "updated", "valid_until", "confidence")  # what a whisper candidate reads of a row
SERVED_LOOKBACK = 50
DECISIONS = WhisperDecisionRow._meta.db_table
CANDIDATES = WhisperCandidateRow._meta.db_table
AFFINITY = AffinityRow._meta.db_table
NODES, EDGES, TAGS = NodeRow._meta.db_table, EdgeRow._meta.db_table, NodeTagRow._meta.db_table

T = TypeVar("T")


def _vec(blob) -> np.ndarray:
    return np.frombuffer(bytes(blob), dtype=np.float32)


# ---------------------------------------------------------------------------
# Kept per process for the store state: the identity set, the self node, the spaces
# ---------------------------------------------------------------------------

_kept: dict[str, tuple[tuple, object]] = {}  # name -> (store state, value), for the latest state each was read at
_KEPT_LOCK = threading.Lock()  # a web worker's request threads share it


def _per_store_state(name: str, load: Callable[[], T]) -> T:
    """`load()`, kept per process until the store state moves (`store_state`: the vector log's newest generation
    and the indexer's write sequence, with the database's name), read here on every call, so a write committed by
    any process or connection is seen by the next call. What is kept must move with that state: it does for every
    read of the index's node, tag and edge rows, which only memory.index writes (each of its writes counts the
    sequence up; a deleted row moves the vector log). Inside a transaction (a writer's own uncommitted rows) nothing
    is kept or used."""
    if connection.in_atomic_block:
        return load()
    state = store_state()  # read first: what load() reads after it is never older than it
    with _KEPT_LOCK:
        found = _kept.get(name)
    if found is not None and found[0] == state:
        return found[1]  # type: ignore[return-value]
    value = load()
    with _KEPT_LOCK:
        _kept[name] = (state, value)
    return value


def self_ids() -> frozenset[str]:
    """The id(s) of the self node, found through the `self` tag index (no scan of the node table)."""
    return _per_store_state("self_ids", lambda: frozenset(uid for uid, in _rows(
        f"SELECT n.uid FROM {NODES} n INNER JOIN {TAGS} t ON n.id = t.node_id WHERE n.is_self = %s AND t.tag = %s",
        [True, "self"])))


def known_spaces() -> frozenset[str]:
    """The projects (spaces) that hold at least one memory."""
    return _per_store_state("spaces", lambda: frozenset(
        s for s, in _rows(f"SELECT DISTINCT space FROM {NODES} WHERE NOT (space IS NULL)", []) if s))


def identity_rows() -> list[NodeRow]:
    """Core and working memories the self node defines, most important first (expired ones included).

    The ORM's statement written out (its building cost ~4 times the read; docs/benchmarks.md, "Soak session 18"),
    read into the same instances (the fields of IDENTITY_FIELDS, the others deferred); every remember moves the
    store state, so the whisper call after one reads it again."""
    me = (f"SELECT u.id FROM {NODES} u INNER JOIN {TAGS} t ON u.id = t.node_id WHERE u.is_self = %s AND t.tag = %s "
          "ORDER BY u.created ASC, u.uid ASC LIMIT 1")
    targets = f"SELECT e.target_id FROM {EDGES} e WHERE e.edge_type = %s AND e.source_id IN ({me})"
    rows = NodeRow.objects.raw(
        f"SELECT {', '.join(IDENTITY_FIELDS)} FROM {NODES} WHERE id IN ({targets}) "
        "ORDER BY importance DESC, updated DESC LIMIT %s", ["defines", True, "self", IDENTITY_LIMIT])
    return [r for r in rows if r.tier in (Tier.CORE, Tier.WORKING)]


def _identity_hit(row: NodeRow) -> SearchHit:
    return SearchHit(
        node_id=row.uid, row_id=row.id, short_id=row.short_id, title=row.title or auto_title(row.content),
        content=row.content, type=row.type, tier=row.tier, space=row.space, tags=tuple(row.tags_text.split()),
        created=row.created, updated=row.updated, valid_until=row.valid_until, confidence=row.confidence,
        score=0.0, source="identity",
    )


def identity_hits(*, now: datetime) -> list[SearchHit]:
    """Live core and working memories the self node defines, as hits (expired and archival ones left out).

    The set is read once per store state (`_per_store_state`: a new, edited, archived or deleted memory, a changed
    edge or self node moves it); what has expired by `now` is left out on every call, as time moves no state.
    """
    hits = _per_store_state("identity", lambda: tuple(_identity_hit(r) for r in identity_rows()))
    return [h for h in hits if h.valid_until is None or h.valid_until > now]


def cosine_spread(*, query_vec: np.ndarray, now: datetime) -> tuple[float, float] | None:
    """Mean and standard deviation of the query's cosine to every live core and working memory (whisper's scope),
    from the vector matrix's scan of that query (memory.search.matrix.spread: no new pass when recall just searched
    the same vector); None with the vec0 index or fewer than two memories."""
    if not uses_matrix():
        return None
    found = matrix.spread(query_vec, Filters(tiers=(str(Tier.CORE), str(Tier.WORKING)), active_at=now))
    return None if found is None else found[:2]


def node_cosines(*, query_vec: np.ndarray, row_ids: Sequence[int]) -> dict[int, float]:
    """Cosine between the query vector and each row's stored embedding (rows without one left out).

    Stored vectors read by rowid: a vec0 KNN restricted to a few rowids would still scan the whole table.
    """
    ids = list(dict.fromkeys(int(r) for r in row_ids))
    return {hit.row_id: hit.cosine for hit in cosines_for(query_vec, ids)} if ids else {}


def _rows(sql: str, params: Sequence) -> list[tuple]:
    """A plain read of the ledger's tables: every whisper call makes these reads, and the ORM spent 10-40 times
    each one's own cost building it (docs/benchmarks.md, "Soak session 18"). Datetimes come back as stored (SQLite:
    UTC text; memory.search.rows.as_datetime reads them as Django's converters do)."""
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return cur.fetchall()


def _in(values: Sequence) -> str:
    return ", ".join(["%s"] * len(values))


def feedback_samples(*, node_uids: Sequence[str]) -> dict[str, list[FeedbackSample]]:
    """Feedback given for these memories, by node id (newest first)."""
    samples: dict[str, list[FeedbackSample]] = defaultdict(list)
    uids = list(dict.fromkeys(node_uids))
    if not uids:
        return samples
    for uid, vec, signal, source, at in _rows(
            f"SELECT node_uid, prompt_vec, signal, source, created FROM {AFFINITY} WHERE node_uid IN ({_in(uids)}) "
            "ORDER BY created DESC, id DESC", uids):
        samples[uid].append(FeedbackSample(prompt_vec=_vec(vec), signal=signal, source=source, at=as_datetime(at)))
    return samples


def served_node_ids(*, session_id: str | None, since: datetime) -> frozenset[str]:
    """Memories injected into this session since `since`."""
    if not session_id:
        return frozenset()
    return frozenset(uid for uid, in _rows(
        f"SELECT c.node_uid FROM {CANDIDATES} c INNER JOIN {DECISIONS} d ON d.id = c.decision_id "
        "WHERE d.session_id = %s AND d.created >= %s AND c.injected = %s",
        [session_id, connection.ops.adapt_datetimefield_value(since), True]))


def next_decision_id() -> int:
    """The id the next decision row is expected to get (the newest one's plus one; another writer may take it)."""
    return (_rows(f"SELECT max(id) FROM {DECISIONS}", [])[0][0] or 0) + 1


def ledger_position(*, session_id: str | None) -> tuple[int, int]:
    """The id the next decision row is expected to get (`next_decision_id`) and how many whisper calls the session
    has made so far (`session_prompt_count`; 0 without a session, unread). Two simple reads: one statement with the
    count as a subquery cost more CPU to build than both (1.30 against 0.96 ms; docs/benchmarks.md, "CPU per call
    (session 15)")."""
    return next_decision_id(), session_prompt_count(session_id=session_id)


def session_prompt_count(*, session_id: str | None) -> int:
    """How many whisper calls a session has made, machine-generated prompts not counted."""
    if not session_id:
        return 0
    return _rows(f"SELECT COUNT(*) FROM {DECISIONS} WHERE session_id = %s AND NOT (decision = %s)",
                 [session_id, SILENT_SYNTHETIC])[0][0]


def decision_get(*, whisper_log_id: int) -> WhisperDecisionRow | None:
    """One decision row, or None (the model instance, read by a plain statement: see memory.selectors.row_by_uid)."""
    rows = WhisperDecisionRow.objects.raw(f"SELECT * FROM {DECISIONS} WHERE id = %s", [int(whisper_log_id)])
    return next(iter(rows), None)


def decision_list(*, limit: int = 50, session_id: str | None = None) -> list[WhisperDecisionRow]:
    """The newest decisions with their candidates (for the UI's "why was this injected" view)."""
    qs = WhisperDecisionRow.objects.all()
    if session_id:
        qs = qs.filter(session_id=session_id)
    ranked = WhisperCandidateRow.objects.order_by(F("final_rank").asc(nulls_last=True), "retrieval_rank", "id")
    return list(qs.prefetch_related(Prefetch("candidates", queryset=ranked))[:limit])


def candidate_for_feedback(*, node_uid: str, whisper_log_id: int | None) -> WhisperCandidateRow | None:
    """The ledger row feedback refers to: that decision's row for the node, else the node's newest injection; its
    decision loaded with it. Plain statements through `Model.objects.raw` (see memory.selectors.row_by_uid), in the
    order the ORM's `first()` read them (the model's ordering; the newest injection: its decision's time, then id)."""
    if whisper_log_id is not None:
        rows = WhisperCandidateRow.objects.raw(
            f"SELECT * FROM {CANDIDATES} WHERE node_uid = %s AND decision_id = %s "
            "ORDER BY decision_id, final_rank, retrieval_rank, id LIMIT 1", [node_uid, int(whisper_log_id)])
    else:
        rows = WhisperCandidateRow.objects.raw(
            f"SELECT c.* FROM {CANDIDATES} c INNER JOIN {DECISIONS} d ON d.id = c.decision_id "
            "WHERE c.node_uid = %s AND c.injected = %s ORDER BY d.created DESC, c.id DESC LIMIT 1", [node_uid, True])
    candidate = next(iter(rows), None)
    if candidate is not None:
        candidate.decision = decision_get(whisper_log_id=candidate.decision_id)
    return candidate


def decision_counts(*, since: datetime | None = None) -> dict[str, int]:
    """Decisions by outcome (for stats)."""
    qs = WhisperDecisionRow.objects.all()
    if since is not None:
        qs = qs.filter(created__gte=since)
    counts: dict[str, int] = defaultdict(int)
    for decision in qs.values_list("decision", flat=True):
        counts[decision] += 1
    return dict(counts)


def decisions_page(*, outcome: str = "all", session_id: str | None = None, limit: int = 50,
                   before_id: int | None = None) -> list[WhisperDecisionRow]:
    """Decided (not pending) decisions, newest first: all, "injected" or "silent", before an id, of one session."""
    qs = WhisperDecisionRow.objects.exclude(decision="pending").defer("prompt_vec")
    if outcome == "injected":
        qs = qs.filter(decision=INJECTED)
    elif outcome == "silent":
        qs = qs.exclude(decision=INJECTED)
    if session_id:
        qs = qs.filter(session_id=session_id)
    if before_id:
        qs = qs.filter(id__lt=before_id)
    return list(qs.order_by("-created", "-id")[:limit])


def candidates_by_decision(*, decision_ids: Sequence[int]) -> dict[int, list[WhisperCandidateRow]]:
    """The candidate rows of each decision (every id is a key)."""
    out: dict[int, list[WhisperCandidateRow]] = {i: [] for i in decision_ids}
    for c in WhisperCandidateRow.objects.filter(decision_id__in=list(decision_ids)):
        out[c.decision_id].append(c)
    return out


def explicit_feedback(*, decision_ids: Sequence[int]) -> dict[tuple[int, str], int]:
    """The latest explicit signal per (decision, memory)."""
    latest: dict[tuple[int, str], int] = {}
    for decision_id, uid, signal in (AffinityRow.objects.filter(decision_id__in=list(decision_ids), source="explicit")
                                     .order_by("created", "id").values_list("decision_id", "node_uid", "signal")):
        latest[(decision_id, uid)] = signal
    return latest


def term_idf(terms: list[str]) -> dict[str, float]:
    """Recall's IDF of each stem over the store (its document counts by the full-text index, kept per process for the
    store state: memory.search.candidates.doc_counts): the logistic gate's `memory_cover` (whisper.evidence)."""
    if not terms:
        return {}
    state = store_state()
    total = memory_count(state)
    return {t: idf(n, total) for t, n in doc_counts(list(terms), state).items()}
