"""bench/whisper_gate_held.py's `drop` candidate (session 24, in bench/whisper_gate_dev14.py until session 25) leaves
out the input whose removal lowers the left-out-by-store log-loss most, chosen on a fold's training rows only; `drop2`
(session 25) one more; `--parts fit` counts. The rows are literal dicts in the gate dump's format
(tests.whisper.gate_dumps)."""

from __future__ import annotations

import numpy as np

from bench import whisper_gate_fit as gf
from bench import whisper_gate_lobo as lobo
from bench.whisper_gate_held import COLUMNS, NINE, dropped, dropped_cols, final, held_out, subsets
from tests.whisper.gate_dumps import gate_dump

OWN_TITLED = 4  # its column among the nine


def rows_of(flip: bool) -> tuple[list[dict], np.ndarray, np.ndarray, list, np.ndarray]:
    """Three batches, two stores; own_titled says the label in docs, and in lifelog says it too or (`flip`) lies."""
    dump = gate_dump(seed=3, per_batch=30, batches=(9, 10, 11), by_store=True)
    for it in dump:
        p = it["prompt"]
        good = set(p["expect"])
        for c in it["calls"][0]:
            right = c["key"] in good
            lies = flip and gf.group_of(p, "store") == "lifelog"
            c["inputs"][OWN_TITLED] = float(right != lies)
    x, y, where = gf.rows(dump)
    stores = np.array([gf.group_of(dump[w[0]]["prompt"], "store") for w in where])
    return dump, x, y, where, stores


def test_an_input_that_turns_over_between_stores_is_dropped():
    _, x, y, _, stores = rows_of(flip=True)
    assert dropped(x, y, stores, np.ones(len(y), dtype=bool)) == "own_titled"


def test_an_input_that_holds_in_every_store_is_kept():
    _, x, y, _, stores = rows_of(flip=False)
    assert dropped(x, y, stores, np.ones(len(y), dtype=bool)) != "own_titled"


def test_each_fold_names_its_threshold_and_the_input_it_dropped():
    dump, x, y, where, stores = rows_of(flip=True)
    batches = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    prompts = np.array([gf.group_of(it["prompt"], "batch") for it in dump])
    counts, notes = held_out(dump, x, y, where, batches, prompts, "drop", np.zeros(len(y)), stores)
    assert [n.split(":")[0] for n in notes] == ["9", "10", "11"] and all("/-" in n for n in notes)
    assert counts[:, COLUMNS.index("inject")].sum() + counts[:, COLUMNS.index("silent")].sum() == len(dump)
    parts = subsets(dump, "fit")
    assert list(parts) == ["1-17", "15-17", "1-14"]  # session 27: batch 17 is fit data, 15-17 unseen by today's
    assert parts["1-17"].all() and parts["1-14"].all() and not parts["15-17"].any()


def test_drop2_drops_the_first_input_then_chooses_a_second_among_the_rest():
    """Session 25's `drop2`: the input `drop` drops, then (when a removal still lowers the loss) one more."""
    _, x, y, _, stores = rows_of(flip=True)
    every = np.ones(len(y), dtype=bool)
    cols, names = dropped_cols(x, y, stores, every, 2)
    assert names[0] == "own_titled" and 1 <= len(names) <= 2
    assert cols == tuple(c for c in NINE if lobo.NAMES[c] not in names)
    assert dropped_cols(x, y, stores, every, 1) == ((tuple(c for c in NINE if c != OWN_TITLED)), ["own_titled"])
    if len(names) == 2:
        assert names[1] == dropped(x, y, stores, every, tuple(c for c in NINE if c != OWN_TITLED))


def test_final_drop2_gives_weights_with_the_dropped_inputs_at_zero():
    """`--final drop2` (session 25): its chosen inputs' names must not shadow the batches the threshold is chosen
    over (they did: a TypeError in bench.whisper_gate_lobo.left_out)."""
    dump, x, y, where, _ = rows_of(flip=True)
    today = np.zeros(len(y))
    w, t, note = final(dump, x, y, where, "drop2", today, np.zeros(len(NINE) + 1))
    assert note.startswith("dropped: own_titled") and w[1 + OWN_TITLED] == 0.0 and t in lobo.GRID
