"""bench/fit_scorer.py's leave-one-group-out figures (issue 11, session 15): a store's pools (its questions and the
whisper calls about it) are scored by a fit that never saw that store, and a whisper labelling round by a fit that
never saw that round; questions have no round and are always fitted. Real numpy fits on literal pools."""

from __future__ import annotations

import numpy as np

from bench.fit_scorer import out_of_group
from bench.scorer_pools import FRESH_BATCHES, STORES, Pool
from memory.ranking.features import FEATURES


def pool(store: str, sign: float, *, set_name: str = "", batch: int = 0, seed: int = 0) -> Pool:
    """40 candidates whose first feature says "relevant" when sign > 0 and "not relevant" when sign < 0."""
    rng = np.random.default_rng(seed)
    labels = np.arange(40) % 4 == 0
    matrix = rng.normal(size=(40, len(FEATURES)))
    matrix[:, 0] = sign * np.where(labels, 2.0, -2.0) + rng.normal(scale=0.1, size=40)
    return Pool(set_name or store, 0, "x", matrix, labels, int(labels.sum()), store=store, batch=batch)


def relevant_first(p: Pool, probs: np.ndarray) -> bool:
    return probs[p.labels].mean() > probs[~p.labels].mean()


def test_a_store_left_out_is_scored_by_the_other_stores_fit_only():
    # The club store's pools say the opposite of every other store's: scored by a fit on the others, club's
    # relevant rows come last; a fit that had seen club (in sample) could not invert them this way.
    pools = [pool("club", -1.0, seed=1), pool("docs", 1.0, seed=2), pool("lifelog", 1.0, seed=3),
             pool("devprojects", 1.0, seed=10)]
    out = out_of_group(pools, 1.0, {id(p) for p in pools}, "store")
    assert not relevant_first(pools[0], out[0])
    assert all(relevant_first(p, pr) for p, pr in zip(pools[1:], out[1:]))


def test_whisper_batches_are_left_out_one_at_a_time_and_questions_never():
    pools = [pool("docs", 1.0, seed=4), pool("docs", 1.0, set_name="whisper", batch=1, seed=5),
             pool("docs", -1.0, set_name="whisper", batch=6, seed=6)]
    out = out_of_group(pools, 1.0, {id(p) for p in pools}, "batch")
    assert out[0] is None  # a question belongs to no labelling round
    assert relevant_first(pools[1], out[1]) and not relevant_first(pools[2], out[2])


def test_a_pool_outside_the_fitted_set_is_scored_but_never_fitted():
    # A should-stay-silent pool left out of the fit (--no-silent) still gets its left-out probabilities.
    pools = [pool("docs", 1.0, seed=7), pool("lifelog", -1.0, seed=8), pool("club", 1.0, seed=9)]
    out = out_of_group(pools, 1.0, {id(pools[0]), id(pools[2])}, "store")
    assert relevant_first(pools[2], out[2])  # fitted on docs only: lifelog's inverted rows did not pull it over
    assert out[1] is not None


def test_the_club_store_is_in_the_pools_and_the_fresh_batch_is_not():
    assert "club" in STORES
    assert 18 in FRESH_BATCHES and 17 not in FRESH_BATCHES


def test_the_gate_fit_leaves_the_fresh_batch_out_of_a_dump():
    from bench.whisper_gate_fit import prepared

    dump = [{"prompt": {"id": f"w{b}", "batch": b, "kind": "silent", "category": "off_topic"}, "calls": [None]}
            for b in (1, 17, 18)]
    assert [item["prompt"]["batch"] for item in prepared(dump, False)] == [1, 17]


def test_the_fit_reads_no_fresh_batch_and_the_transfer_line_reads_only_the_fresh_batch():
    from bench.scorer_pools import fit_prompts

    prompts = [{"id": f"w{b}", "batch": b} for b in (1, 10, *sorted(FRESH_BATCHES))] + [{"id": "w-first"}]
    assert [p["id"] for p in fit_prompts(prompts)] == ["w1", "w10", "w-first"]  # no batch: batch 1
    assert [p["id"] for p in fit_prompts(prompts, fresh=True)] == [f"w{b}" for b in sorted(FRESH_BATCHES)]
