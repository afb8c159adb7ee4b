"""The feature matrix built a column at a time has the very bits of the per-candidate loop it replaced (issue 13).

The scorer was fitted on the loop's values, so the reference below is that loop, kept verbatim; random candidates
cover every branch (no keyword or vector hit, no title, long memories, spaces, windows, missing confidence).
"""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memory.ranking import features as f

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
WORDS = ["billing", "webhook", "retries", "jitter", "garden", "sensor", "moisture", "deploy", "invoice", "queue",
         "the", "and", "of", "backs", "up", "timeout", "postgres", "painting", "paintings", "painted"]


def _loop_matrix(query: f.QueryFacts, candidates) -> np.ndarray:
    n = len(candidates)
    out = np.zeros((n, len(f.FEATURES)), dtype=np.float64)
    if not n:
        return out
    best_bm25 = max((c.bm25 for c in candidates if c.bm25 is not None and c.bm25 > 0), default=0.0)
    cosines = np.array([c.cosine if c.cosine is not None else -1.0 for c in candidates])
    order = np.argsort(-cosines, kind="stable")
    vec_rank = np.empty(n, dtype=np.int64)
    vec_rank[order] = np.arange(1, n + 1)
    best_cos = float(cosines.max())
    total_weight = sum(query.weights) or 1.0
    top_idf = max(query.weights, default=0.0) or 1.0
    for i, c in enumerate(candidates):
        tokenise = f._tokens if len(c.content) <= f.LONG_DOC_CHARS else f._long_doc
        doc_set, doc_pairs, content_words = tokenise(c.content)
        title = set(f.stems(c.title)) if c.title else set()
        cos = c.cosine if c.cosine is not None else 0.0
        info = math.log1p(min(content_words, f.INFO_CAP))
        out[i] = (
            (c.bm25 / best_bm25) if c.bm25 is not None and best_bm25 > 0 else 0.0,
            1.0 / math.sqrt(c.fts_rank) if c.fts_rank else 0.0,
            cos,
            (cos - best_cos) if c.cosine is not None else -1.0,
            1.0 / math.sqrt(vec_rank[i]) if c.cosine is not None else 0.0,
            sum(w for t, w in zip(query.terms, query.weights) if t in doc_set) / total_weight,
            (sum(1 for p in query.pairs if p in doc_pairs) / len(query.pairs)) if query.pairs else 0.0,
            (sum(1 for t in query.terms if t in title) / len(query.terms)) if query.terms else 0.0,
            info,
            c.centrality,
            f._window_value(c.created, query.window),
            1.0 if query.default_space is not None and c.space not in (None, query.default_space) else 0.0,
            1.0 if c.confidence is None else float(c.confidence),
            f.TIER_VALUE.get(str(c.tier), 0.0),
            2.0 ** (-max(0.0, c.days_since_access) / 30.0),
            min(1.0, math.log1p(max(0, c.access_count)) / math.log(21)),
            1.0 if query.default_space is not None and c.space == query.default_space else 0.0,
            max((w for t, w in zip(query.terms, query.weights) if t in doc_set), default=0.0) / top_idf,
            max(0.0, info - f.INFO_SHORT),
        )
    return out


def _text(rng: random.Random, count: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(count))


def _case(rng: random.Random):
    text = _text(rng, rng.randint(0, 6))
    terms = f.query_terms(text)
    window = None
    if rng.random() < 0.4:
        after = NOW - timedelta(days=rng.randint(1, 60))
        window = (after, None if rng.random() < 0.3 else after + timedelta(days=rng.randint(1, 20)))
    query = f.query_facts(text, {t: rng.uniform(0.05, 9.0) for t in terms if rng.random() < 0.8},
                          default_space=rng.choice([None, "billing", "garden"]), window=window)
    candidates = [f.Candidate(
        row_id=i, content=_text(rng, rng.choice([3, 12, 40, 700])), title=_text(rng, rng.randint(0, 4)),
        bm25=rng.choice([None, 0.0, rng.uniform(0.1, 30.0)]), fts_rank=rng.choice([None, rng.randint(1, 90)]),
        cosine=rng.choice([None, rng.uniform(-0.2, 0.9)]), centrality=rng.uniform(-0.1, 0.6),
        created=NOW - timedelta(days=rng.uniform(0, 700)), space=rng.choice([None, "billing", "garden", "thesis"]),
        confidence=rng.choice([None, rng.random()]), tier=rng.choice(["core", "working", "archival"]),
        access_count=rng.randint(0, 40), days_since_access=rng.choice([math.inf, rng.uniform(0, 400)]),
    ) for i in range(rng.randint(0, 60))]
    return query, candidates


@pytest.mark.parametrize("seed", range(40))
def test_columns_have_the_bits_of_the_per_candidate_loop(seed):
    query, candidates = _case(random.Random(seed))

    got, want = f.feature_matrix(query, candidates), _loop_matrix(query, candidates)

    assert got.shape == want.shape
    assert got.tobytes() == want.tobytes()


EDGE_TEXTS = ["Paintings painted; the painter's painting", "a b c", "", "x", "v2 2024 release-notes v2.1",
              "Café naïve résumé cafe", "the the the and the", "ends with paint", "PAINT paint Paint",
              "it's Sam's plan's", "under_score snake_case", "Tabs\tand\nnew lines  double  spaces"]


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_a_cached_memory_answers_every_term_and_pair_as_its_sets_do(text):
    """`_doc` holds a memory's stems as one spaced string (session 23); terms and pairs that are prefixes,
    suffixes or repeats of its stems, and ones no stem can be (a space, empty, upper case, punctuation), are found
    exactly when `_tokens`' sets hold them."""
    words, pairs, _ = f._tokens(text)
    probes = sorted(words) + ["paint", "painting", "aint", "in", "", "a b", "Paint", "caf", "caf\u00e9", "v2.1",
                              "sam", "s", "2", "the", "th", "e", "under", "score", "under_score", "line", "lin"]
    probe_pairs = sorted(pairs) + [(a, b) for a in probes[:12] for b in probes[:12]] + [("the", "the"), ("a", "")]
    query = f.QueryFacts(terms=tuple(probes), weights=tuple(float(i + 1) for i in range(len(probes))),
                         pairs=tuple(probe_pairs))
    term_keys, pair_keys = f.doc_keys(query)
    joined, count = f._doc(text)
    assert count == f._tokens(text)[2]
    assert [k is not None and k in joined for k in term_keys] == [t in words for t in probes]
    assert [k is not None and k in joined for k in pair_keys] == [p in pairs for p in probe_pairs]
    candidate = f.Candidate(row_id=1, content=text, title=text, bm25=None, fts_rank=None, cosine=0.5, centrality=0.1,
                            created=NOW, space=None, confidence=None, tier="working", access_count=0,
                            days_since_access=1.0)
    assert f.feature_matrix(query, [candidate]).tobytes() == _loop_matrix(query, [candidate]).tobytes()
