"""bench/whisper_gate_study.py --new-data (issue 11, session 15): every other batch is scored by a gate fitted on the
remaining batches, once with the new batch's hits in the fit and once without; the new batch itself is never scored.
Literal dumps in --gate-dump's format, real numpy fits."""

from __future__ import annotations

import json

from bench import whisper_gate_study as study
from bench.whisper_gate_fit import rows


def prompt(pid: str, batch: int, right: str) -> dict:
    """An inject prompt whose right memory `right` has the lower cosine in batch 6 and the higher one elsewhere."""
    hi, lo = (0.3, 0.8) if batch == 6 else (0.8, 0.3)
    call = [{"key": right, "route": "logistic", "g": 0.5, "cosine": hi, "score": 0.5, "recall": True},
            {"key": f"{pid}-x", "route": "logistic", "g": 0.5, "cosine": lo, "score": 0.5, "recall": True}]
    return {"prompt": {"id": pid, "batch": batch, "kind": "inject", "category": "project", "expect": [right],
                       "space": "p"}, "calls": [call]}


def test_the_new_batch_is_in_one_fit_and_out_of_the_other():
    study.EXTRAS = ()
    dump = [prompt(f"a{i}", b, f"p{b}{i}") for b in (1, 2, 6) for i in range(8)]
    dump = study.variant(json.dumps(dump), None)
    with_, without = study.held_out(dump, list(range(6)), 1.0, "batch", "6")
    _, _, where = rows(dump)
    scored = {dump[k[0]]["prompt"]["batch"] for k in with_}
    assert scored == {1, 2} and set(with_) == set(without)  # batch 6 is never scored
    right = [k for k in where if k[2] == 0 and dump[k[0]]["prompt"]["batch"] == 1]
    wrong = [k for k in where if k[2] == 1 and dump[k[0]]["prompt"]["batch"] == 1]
    # Without batch 6 the fit on batch 2 alone trusts the cosine fully; batch 6's inverted rows pull it back.
    gap = lambda lg: min(lg[k] for k in right) - max(lg[k] for k in wrong)  # noqa: E731
    assert gap(without) > gap(with_) > -100
