"""bench.whisper_pool_variants' pure part: the leave-one-batch-out choice among a family of pool settings."""

from __future__ import annotations

import math

import pytest

from bench.whisper_gate_fit import FRESH_BATCHES
from bench.whisper_pool_variants import figures, lobo, summed


def _batch(hits, correct, injected, silent_ok=5):
    return {"hits": hits, "inject": 10, "correct": correct, "injected": injected, "silent_ok": silent_ok, "silent": 5}


def _runs(wider_batch_3):
    base = {str(b): _batch(5, 5, 6) for b in range(1, 12)}
    wider = {str(b): _batch(6, 6, 7) for b in range(1, 12)}  # one more hit, precision up a little
    wider["3"] = wider_batch_3
    fresh = sorted(FRESH_BATCHES)[0]
    base[str(fresh)] = wider[str(fresh)] = _batch(0, 0, 0)
    return {"base": {"batches": base}, "limit:8": {"batches": wider}}


def test_the_setting_that_gains_everywhere_is_chosen_on_every_fold():
    total, chosen = lobo(_runs(_batch(6, 6, 7)), "limit")
    assert chosen == ["limit:8"] * 11
    assert (total["hits"], total["inject"]) == (66, 110)


def test_a_setting_that_costs_silence_on_the_ten_is_not_chosen():
    runs = _runs(_batch(6, 6, 7, silent_ok=0))  # batch 3 loses every silent prompt: the ten around it lose silence
    total, chosen = lobo(runs, "limit")
    assert chosen[2] == "limit:8" and chosen.count("base") == 10
    assert total["hits"] == 5 * 10 + 6


def test_a_family_without_its_base_is_not_judged():
    assert lobo({"limit:8": {"batches": {}}}, "limit") is None


@pytest.mark.parametrize("counts, text", [(_batch(5, 5, 6), "0.500 (5/10) / 0.833 (5/6) / 1.000 (5/5)"),
                                          (_batch(0, 0, 0), "0.000 (0/10) / 1.000 (0/0) / 1.000 (5/5)")])
def test_figures(counts, text):
    assert figures(summed({"1": counts}, lambda b: True)) == text


def test_the_quantile_map_carries_a_probability_to_the_other_scorers_scale():
    from bench.whisper_pool_variants import fit_qmap, logit, mapped

    # v5 gives every memory the log-odds v2 gives it less one: the map undoes that, and a shift takes it back.
    pairs = [(p, 1 / (1 + math.exp(1 - logit(p)))) for p in (0.01 * i for i in range(1, 100))]
    qmap = fit_qmap(pairs)
    assert mapped(pairs[49][1], qmap) == pytest.approx(0.5, abs=1e-6)
    assert logit(mapped(pairs[49][1], qmap, shift=1.0)) == pytest.approx(-1.0, abs=1e-6)
    last = 1 / (1 + math.exp(-qmap["v2"][-1]))
    assert mapped(0.999999, qmap) == pytest.approx(last) and mapped(0.9999, qmap) == pytest.approx(last)  # past the end
