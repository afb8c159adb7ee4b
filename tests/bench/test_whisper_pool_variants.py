"""bench.whisper_pool_variants' pure part: the leave-one-batch-out choice among a family of pool settings."""

from __future__ import annotations

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
