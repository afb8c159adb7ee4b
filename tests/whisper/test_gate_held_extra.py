"""bench/whisper_gate_held.py's `--extra` (session 26): a candidate input of bench.whisper_gate_extras.EXTRAS as a
column after the nine, fitted by the variant `nine+NAME:l2` under the same held-out rule; each fold's note names its
right prompts and their difference to today's gate as shipped. The rows are literal dicts in the gate dump's format
(tests.whisper.gate_dumps)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from bench import whisper_gate_fit as gf
from bench import whisper_gate_lobo as lobo
from bench.whisper_gate_held import COLUMNS, NINE, by_category, held_out, outcomes, variant_cols
from tests.whisper.gate_dumps import gate_dump


def noise_but_the_cosine() -> list[dict]:
    """Three batches; the nine inputs are noise, the answer is the call's nearest memory by cosine."""
    dump = gate_dump(seed=5, per_batch=30, batches=(9, 10, 11))
    rng = np.random.default_rng(7)
    for it in dump:
        good = set(it["prompt"]["expect"])
        for c in it["calls"][0]:
            c["inputs"] = [float(v) for v in rng.normal(size=9)]
            c["cosine"] = 0.6 if c["key"] in good else 0.3
    return dump


def test_nine_plus_an_extra_is_the_nine_then_its_column():
    assert variant_cols("nine+cos_margin:1", ("long", "cos_margin")) == (NINE + (10,), 1.0)
    assert variant_cols("nine:0.3") == (NINE, 0.3)


def test_an_extra_not_asked_for_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown gate input"):
        variant_cols("nine+cos_margin:1", ("long",))


def test_the_extra_input_is_fitted_and_its_folds_say_what_they_gained():
    dump = noise_but_the_cosine()
    x, y, where = gf.rows(dump, ("cos_margin",))
    assert x.shape[1] == 10
    batches = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    prompts = np.array([gf.group_of(it["prompt"], "batch") for it in dump])
    shipped = outcomes(dump, lobo.as_dict(np.full(len(y), -9.0), where), 0.0)  # silent everywhere
    nine, _ = held_out(dump, x, y, where, batches, prompts, "nine:1", np.zeros(len(y)), extras=("cos_margin",))
    ten, notes = held_out(dump, x, y, where, batches, prompts, "nine+cos_margin:1", np.zeros(len(y)),
                          extras=("cos_margin",), shipped=shipped)
    assert ten[:, -1].sum() > nine[:, -1].sum()
    per_fold = [ten[prompts == b, -1].sum() - shipped[prompts == b, -1].sum() for b in ("9", "10", "11")]
    assert [n.split(" (")[1] for n in notes] == [
        f"{ten[prompts == b, -1].sum()}, {d:+d})" for b, d in zip(("9", "10", "11"), per_fold)]


def test_the_loss_table_reads_an_extra_input_after_the_nine(tmp_path, capsys):
    """bench.whisper_gate_lobo --loss --extra: the nine and the candidate input, left out by batch, beside nine:1."""
    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(noise_but_the_cosine()))
    assert lobo.main([str(dump), "--loss", "--extra", "cos_margin", "--variants", "nine:1,nine+cos_margin:1"]) == 0
    rows = [line.split(" | ") for line in capsys.readouterr().out.splitlines() if line.startswith("| nine")]
    assert [(r[0], r[1]) for r in rows] == [("| nine:1", "9"), ("| nine+cos_margin:1", "10")]
    assert float(rows[1][3].split()[0]) < 0  # the cosine says the answer: the left-out log-loss falls


def test_the_categories_line_counts_right_prompts_against_today_as_shipped():
    dump = noise_but_the_cosine()
    counts = np.zeros((len(dump), len(COLUMNS)), dtype=int)
    counts[:, -1] = [it["prompt"]["kind"] == "silent" for it in dump]  # silent ones right
    shipped = np.zeros_like(counts)
    shipped[:, -1] = 1  # every prompt right
    assert by_category(dump, counts, shipped) == "right by category: off_topic 30/30 (+0), project 0/60 (-60)"


def test_final_today_with_an_extra_input_replays_the_nine(tmp_path, capsys):
    """`--final today --extra NAME` replays today's weights on the nine columns and leaves the extra out (session 26's
    review: the ten weights met the nine columns and the extra one, and the replay stopped on the shapes)."""
    from bench import whisper_gate_held as held
    from whisper.conf import GATE_WEIGHTS

    dump = tmp_path / "dump.json"
    dump.write_text(json.dumps(noise_but_the_cosine()))
    assert held.main([str(dump), "--final", "today", "--extra", "cos_margin"]) == 0
    out = capsys.readouterr().out
    assert f"ORMAH_WHISPER_GATE_WEIGHTS=\"{' '.join(f'{v:.3f}' for v in GATE_WEIGHTS)}\"" in out
    assert "replayed in sample: " in out
