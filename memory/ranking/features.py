"""Per-candidate features of the learned scorer (pure: plain values in, a float matrix out).

One row per candidate memory of one query, one column per name in FEATURES. A scorer file
(memory/ranking/weights-v*.json) lists the names it was fitted on, so a column is never matched by position alone:
a file fitted before a feature was added still loads and reads only its own columns.

| feature      | meaning                                                                              |
|--------------|--------------------------------------------------------------------------------------|
| bm25_rel     | BM25 score / the query's best BM25 score (0 when the keyword leg did not find it)    |
| fts_rr       | 1 / sqrt(BM25 rank) (0 when not found by keywords)                                   |
| cos          | cosine of the query and memory vectors                                               |
| cos_gap      | cosine minus the best cosine among the query's candidates (<= 0)                     |
| vec_rr       | 1 / sqrt(rank by cosine among the candidates)                                        |
| coverage     | IDF-weighted share of the query's content words found in the memory (light stems)    |
| rare         | IDF of the rarest query word the memory holds / IDF of the query's rarest word       |
| phrase       | share of the query's adjacent content-word pairs found adjacent in the memory        |
| title        | share of the query's content words in the memory's title                            |
| info         | log(1 + content words of the memory): short filler turns carry little                |
| info_long    | how far info goes past a 50-word note (0 for shorter): long imported pages           |
| centrality   | cosine of the memory to the mean of the other memories: hubs sit near the centre     |
| window       | +1 inside the time window the query names, -1 outside it, 0 when it names none       |
| other_space  | 1 when the memory belongs to another project than the caller's                       |
| same_space   | 1 when the memory belongs to the caller's project                                    |
| confidence   | the memory's confidence (1.0 when unknown)                                           |
| tier         | +1 core, 0 working, -1 archival                                                      |
| recency      | 2^(-days since last use / 30)                                                        |
| access       | log(1 + confirmed uses) / log(21), capped at 1                                       |
"""

from __future__ import annotations

import hashlib
import math
import re
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from datetime import datetime
from sys import getsizeof

import numpy as np

from memory.domain.text import STOP_WORDS
from memory.memo import (DOC_BYTES, ENTRY_BYTES, LONG_DOC_BYTES, STEM_CACHE, STEM_CACHE_CHARS, TITLE_STEMS_BYTES,
                         args_cost, byte_lru)

FEATURES = (
    "bm25_rel", "fts_rr", "cos", "cos_gap", "vec_rr", "coverage", "phrase", "title", "info", "centrality",
    "window", "other_space", "confidence", "tier", "recency", "access", "same_space", "rare", "info_long",
)
TIER_VALUE = {"core": 1.0, "working": 0.0, "archival": -1.0}
_WORD = re.compile(r"[a-z0-9]+")
_SUFFIXES = ("ies", "ing", "ed", "es", "ly", "s")
INFO_CAP = 400  # content words counted at most
INFO_SHORT = math.log1p(50)  # a note of this many content words or fewer has no info_long


def stem(word: str) -> str:
    """A light stem (plural, -ing, -ed, -ly), enough to match "paintings" with "painting" and "painted"."""
    return _short_stem(word) if len(word) <= STEM_CACHE_CHARS else _stem(word)


def _stem(word: str) -> str:
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


# Cached for short words only, so the cache's bytes are bounded by its entries (memory.memo.STEM_CACHE: 2.25 MiB).
_short_stem = lru_cache(maxsize=STEM_CACHE)(_stem)


def stems(text: str) -> list[str]:
    """Stemmed lowercase word tokens of a text, in order (stop words kept, for phrase adjacency)."""
    return [stem(w) for w in _WORD.findall(text.lower().replace("'s", ""))]


_PAIR_BYTES = getsizeof(("a", "b"))  # an adjacent pair's tuple (its two stems are counted in the stem set)


def _doc_cost(args: tuple, result: tuple[frozenset[str], frozenset[tuple[str, str]], int]) -> int:
    """The estimated bytes of one `_long_doc` entry: its key, the two frozensets, each stem string (counted in every
    entry that holds it, though `stem`'s cache shares the short ones) and each pair tuple, the result tuple;
    O(stems)."""
    words, pairs, count = result
    return (ENTRY_BYTES + sum(getsizeof(a) for a in args) + getsizeof(result) + getsizeof(count)
            + getsizeof(words) + sum(getsizeof(w) for w in words) + getsizeof(pairs) + _PAIR_BYTES * len(pairs))


def _tokens(content: str) -> tuple[frozenset[str], frozenset[tuple[str, str]], int]:
    """A memory's stems, adjacent stem pairs and count of content words."""
    doc = stems(content)
    words = sum(1 for w in _WORD.findall(content.lower()) if w not in STOP_WORDS and len(w) > 1)
    return frozenset(doc), frozenset(zip(doc, doc[1:])), words


@byte_lru(max_bytes=DOC_BYTES, cost=args_cost, maxsize=8192)
def _doc(content: str) -> tuple[str, int]:
    """A memory's stems as one string, each between single spaces (" s1 s2 ... sn "), and its count of content words
    (cached: memories recur across queries).

    The same facts as `_tokens`' sets in ~1/20 of their bytes (issue 13, session 23: at ~6 KB an entry the 5 MiB
    budget held ~860 of the soak store's 2,000 memories, and most lookups missed): stems are `[a-z0-9]+`, so a stem
    `t` is one of the memory's exactly when " t " is in the string, and `(a, b)` is an adjacent pair exactly when
    " a b " is (`doc_keys`).
    """
    doc = stems(content)
    words = sum(1 for w in _WORD.findall(content.lower()) if w not in STOP_WORDS and len(w) > 1)
    return f" {' '.join(doc)} ", words


def doc_keys(query: QueryFacts) -> tuple[tuple[str | None, ...], tuple[str | None, ...]]:
    """The query's terms and adjacent pairs as `_doc`'s substrings (" t ", " a b "); None for a term or pair that
    no memory's stems can hold (not `[a-z0-9]+`), which is then never found, as in `_tokens`' sets."""
    terms = tuple(f" {t} " if _WORD.fullmatch(t) else None for t in query.terms)
    pairs = tuple(f" {a} {b} " if _WORD.fullmatch(a) and _WORD.fullmatch(b) else None for a, b in query.pairs)
    return terms, pairs


# digest -> (tokenised document, its estimated bytes), least recently used first
_LONG_DOCS: OrderedDict[bytes, tuple[tuple[frozenset[str], frozenset[tuple[str, str]], int], int]] = OrderedDict()
LONG_DOC_CHARS = 2000
LONG_DOC_CACHE = 128  # entries at most; and LONG_DOC_BYTES (a tokenised 50 KB document holds ~1 MB of stems)
_LONG_BYTES = [0]  # the estimated bytes held in _LONG_DOCS
_LONG_LOCK = threading.Lock()  # the web worker's threads share it


def _long_doc(content: str) -> tuple[frozenset[str], frozenset[tuple[str, str]], int]:
    """`_tokens` for a long memory, cached by a digest of its text (not the text itself) in a small LRU.

    Long documents recur across queries as often as short ones (41 of 168 memories in the docs store, ~32
    candidates a query); tokenising them afresh on every query was most of whisper's CPU.
    """
    key = hashlib.blake2b(content.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    with _LONG_LOCK:
        held = _LONG_DOCS.get(key)
        if held is not None:
            _LONG_DOCS.move_to_end(key)
            return held[0]
    hit = _tokens(content)
    cost = _doc_cost((key,), hit)
    if cost > LONG_DOC_BYTES:
        return hit
    with _LONG_LOCK:
        old = _LONG_DOCS.pop(key, None)
        _LONG_BYTES[0] += cost - (old[1] if old is not None else 0)
        _LONG_DOCS[key] = (hit, cost)
        while len(_LONG_DOCS) > LONG_DOC_CACHE or _LONG_BYTES[0] > LONG_DOC_BYTES:
            _LONG_BYTES[0] -= _LONG_DOCS.popitem(last=False)[1][1]
    return hit


def long_doc_bytes() -> int:
    """The estimated bytes `_long_doc`'s cache holds now."""
    with _LONG_LOCK:
        return _LONG_BYTES[0]


def query_terms(text: str) -> list[str]:
    """The query's content words (no stop words, no single characters), stemmed, in order, without repeats."""
    return list(dict.fromkeys(stem(w) for w in _WORD.findall(text.lower().replace("'s", ""))
                              if len(w) > 1 and w not in STOP_WORDS))


def idf(doc_count: int, total: int) -> float:
    """BM25's inverse document frequency, floored at a small positive value."""
    return max(0.05, math.log(1 + (total - doc_count + 0.5) / (doc_count + 0.5)))


@dataclass(frozen=True, slots=True)
class QueryFacts:
    """What the features need of the query: its terms with their IDF, adjacent pairs, the caller's project."""

    terms: tuple[str, ...]
    weights: tuple[float, ...]  # IDF of each term
    pairs: tuple[tuple[str, str], ...]
    default_space: str | None = None
    window: tuple[datetime, datetime | None] | None = None


def query_facts(text: str, idfs: Mapping[str, float], *, default_space: str | None = None,
                window: tuple[datetime, datetime | None] | None = None) -> QueryFacts:
    """Query facts from its text and the IDF of each term (terms missing from `idfs` weigh the top IDF)."""
    terms = query_terms(text)
    top = max(idfs.values(), default=1.0)
    content = [stem(w) for w in _WORD.findall(text.lower().replace("'s", "")) if len(w) > 1 and w not in STOP_WORDS]
    pairs = tuple(dict.fromkeys(zip(content, content[1:])))
    return QueryFacts(terms=tuple(terms), weights=tuple(idfs.get(t, top) for t in terms), pairs=pairs,
                      default_space=default_space, window=window)


@dataclass(frozen=True, slots=True)
class Candidate:
    """What the features need of one candidate memory."""

    row_id: int
    content: str
    title: str
    bm25: float | None
    fts_rank: int | None
    cosine: float | None
    centrality: float
    created: datetime
    space: str | None
    confidence: float | None
    tier: str
    access_count: int
    days_since_access: float


def _window_value(created: datetime, window: tuple[datetime, datetime | None] | None) -> float:
    if window is None:
        return 0.0
    after, before = window
    return 1.0 if created >= after and (before is None or created < before) else -1.0


@byte_lru(max_bytes=TITLE_STEMS_BYTES, cost=args_cost, maxsize=8192)
def _title_stems(title: str) -> str:
    """A title's stems as one string between single spaces, as `_doc` holds a memory's (a query term `t` is one of
    them exactly when " t " is in it): ~350 bytes an entry where the frozenset of stems took ~1.4 KB, so the budget
    holds ~1,500 titles, not ~370 (session 23)."""
    return f" {' '.join(stems(title))} "


_COLUMN = {name: i for i, name in enumerate(FEATURES)}


def feature_matrix(query: QueryFacts, candidates: Sequence[Candidate]) -> np.ndarray:
    """The (n, len(FEATURES)) float64 matrix of the candidates of one query.

    Built a column at a time (numpy where the operation is exact: subtraction, division, square root; Python's
    math elsewhere, as before), so every value has the very bits the per-candidate loop gave, which the scorer
    was fitted on (tests/search/test_features_columns.py compares both).
    """
    n = len(candidates)
    out = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if not n:
        return out
    col = _COLUMN
    bm25 = [c.bm25 for c in candidates]
    best_bm25 = max((b for b in bm25 if b is not None and b > 0), default=0.0)
    has_cos = np.array([c.cosine is not None for c in candidates])
    cosines = np.array([c.cosine if c.cosine is not None else -1.0 for c in candidates])
    order = np.argsort(-cosines, kind="stable")
    vec_rank = np.empty(n, dtype=np.int64)
    vec_rank[order] = np.arange(1, n + 1)
    best_cos = float(cosines.max())
    total_weight = sum(query.weights) or 1.0
    top_idf = max(query.weights, default=0.0) or 1.0
    weighted = tuple(zip(query.terms, query.weights))
    pairs, terms = query.pairs, query.terms

    out[:, col["bm25_rel"]] = [(b / best_bm25) if b is not None and best_bm25 > 0 else 0.0 for b in bm25]
    out[:, col["fts_rr"]] = [1.0 / math.sqrt(c.fts_rank) if c.fts_rank else 0.0 for c in candidates]
    out[:, col["cos"]] = np.where(has_cos, cosines, 0.0)
    out[:, col["cos_gap"]] = np.where(has_cos, cosines - best_cos, -1.0)
    out[:, col["vec_rr"]] = np.where(has_cos, 1.0 / np.sqrt(vec_rank), 0.0)
    coverage, phrase, title_share, info, rare = [], [], [], [], []
    term_keys, pair_keys = doc_keys(query)
    weighted_keys = tuple(zip(term_keys, query.weights))
    for c in candidates:
        # Memories recur across queries: short ones are cached by text (their stems as one string), long ones by
        # digest (their sets: a long string would be scanned once a term); bounded memory.
        if len(c.content) <= LONG_DOC_CHARS:
            joined, content_words = _doc(c.content)
            held = [w for k, w in weighted_keys if k is not None and k in joined]
            found = sum(1 for k in pair_keys if k is not None and k in joined)
        else:
            doc_set, doc_pairs, content_words = _long_doc(c.content)
            held = [w for t, w in weighted if t in doc_set]
            found = sum(1 for p in pairs if p in doc_pairs)
        coverage.append(sum(held) / total_weight)
        rare.append(max(held, default=0.0) / top_idf)
        phrase.append((found / len(pairs)) if pairs else 0.0)
        title = _title_stems(c.title) if c.title else ""
        title_share.append((sum(1 for k in term_keys if k is not None and k in title) / len(terms)) if terms else 0.0)
        info.append(math.log1p(min(content_words, INFO_CAP)))
    out[:, col["coverage"]] = coverage
    out[:, col["phrase"]] = phrase
    out[:, col["title"]] = title_share
    out[:, col["info"]] = info
    out[:, col["centrality"]] = [c.centrality for c in candidates]
    out[:, col["window"]] = [_window_value(c.created, query.window) for c in candidates]
    _space_columns(out, [c.space for c in candidates], query.default_space)
    out[:, col["confidence"]] = [1.0 if c.confidence is None else float(c.confidence) for c in candidates]
    out[:, col["tier"]] = [TIER_VALUE.get(str(c.tier), 0.0) for c in candidates]
    out[:, col["recency"]] = [2.0 ** (-max(0.0, c.days_since_access) / 30.0) for c in candidates]
    out[:, col["access"]] = [min(1.0, math.log1p(max(0, c.access_count)) / math.log(21)) for c in candidates]
    out[:, col["rare"]] = rare
    out[:, col["info_long"]] = [max(0.0, i - INFO_SHORT) for i in info]
    return out


def _space_columns(out: np.ndarray, spaces: Sequence[str | None], space: str | None) -> None:
    """Set `other_space` and `same_space` of each row (its memory's project in `spaces`) for the caller's `space`."""
    out[:, _COLUMN["other_space"]] = [1.0 if space is not None and s not in (None, space) else 0.0 for s in spaces]
    out[:, _COLUMN["same_space"]] = [1.0 if space is not None and s == space else 0.0 for s in spaces]


def with_default_space(matrix: np.ndarray, spaces: Sequence[str | None], space: str | None) -> np.ndarray:
    """The same features for a caller in another project (`space`; None: none preferred): a copy with the two space
    columns set again, the only ones that read it (`spaces`: each row's memory's project)."""
    out = matrix.copy()
    if out.size:
        _space_columns(out, spaces, space)
    return out


def without_window(matrix: np.ndarray) -> np.ndarray:
    """The same features as if the query named no time (the window column zeroed)."""
    out = matrix.copy()
    if out.size:
        out[:, FEATURES.index("window")] = 0.0
    return out
