"""Recall-quality regression check: the benchmark harness on a deterministic slice of the labelled dataset.

The full run (196 memories, 82 queries) is `python -m bench.recall_quality`; its table is in
docs/benchmarks.md. The floors sit a little under what the slice measures, so a ranking regression fails here.
"""

from __future__ import annotations

import pytest

from bench.recall import harness

PER_CATEGORY = {"paraphrase": 3, "keyword": 3, "identity": 3, "temporal": 2, "project": 2, "edge": 2}
MEMORIES = 40


@pytest.fixture
def sliced(home, db):
    ds = harness.dataset_slice(harness.load_dataset(), per_category=PER_CATEGORY, memories=MEMORIES)
    return ds, harness.seed(ds)


def test_slice_is_deterministic_and_small():
    ds = harness.dataset_slice(harness.load_dataset(), per_category=PER_CATEGORY, memories=MEMORIES)
    assert (len(ds.memories), len(ds.queries)) == (40, 15)
    assert [q.id for q in ds.queries][:4] == ["q001", "q002", "q003", "q016"]


def test_full_pipeline_keeps_its_recall_and_beats_each_leg(sliced):
    ds, keymap = sliced
    report = harness.evaluate(ds, keymap)
    _, full_r10, full_mrr = report.overall("full")
    assert full_r10 >= 0.9    # measured 1.000
    assert full_mrr >= 0.85   # measured 0.900
    for leg in ("bm25", "vectors", "fused"):
        _, r10, mrr = report.overall(leg)
        assert full_r10 > r10 and full_mrr > mrr, leg
