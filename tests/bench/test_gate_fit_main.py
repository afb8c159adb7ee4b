"""bench/whisper_gate_fit.py's command (session 23, review12): a dump whose judged hits are all of one class (or
none) is refused with a clear line and exit status 2, not a singular-matrix traceback from the fit; its AUC is
bench.roc.roc_auc's, and group_of lives in bench/prompt_groups.py, re-exported."""

from __future__ import annotations

import json

import pytest

from bench import prompt_groups, roc
from bench import whisper_gate_fit as gf
from tests.whisper.gate_dumps import gate_dump


def dump(tmp_path, keep=lambda item: True):
    items = [item for item in gate_dump(seed=0, per_batch=9, batches=(1, 2, 3), by_store=True) if keep(item)]
    for item in items:
        for c in item["calls"][0]:
            c.update(type="fact", own_titled=0.0)
    path = tmp_path / "dump.json"
    path.write_text(json.dumps(items))
    return str(path)


def test_a_dump_of_one_class_is_refused_clearly(tmp_path, capsys):
    assert gf.main([dump(tmp_path, lambda item: item["prompt"]["kind"] == "silent")]) == 2
    assert "9 hits judged, 0 right: the fit needs right and wrong hits" in capsys.readouterr().err
    (tmp_path / "empty.json").write_text("[]")
    assert gf.main([str(tmp_path / "empty.json")]) == 2


def test_a_dump_of_both_classes_prints_roc_auc(tmp_path, capsys):
    assert gf.main([dump(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("45 hits judged, 18 right") and "AUC / log-loss: in sample 0." in out
    assert gf.roc_auc is roc.roc_auc and not hasattr(gf, "auc")
    assert gf.group_of is prompt_groups.group_of


@pytest.mark.parametrize(("prompt", "store"), [
    ({"expect": ["h012"], "category": "project", "space": "verbouwing"}, "home"),
    ({"category": "near_miss", "space": "verbouwing", "kind": "silent"}, "home"),
    ({"category": "near_miss", "space": "kalkzak", "kind": "silent"}, "club"),
    ({"category": "near_miss", "space": "gpxkit", "kind": "silent"}, "devprojects"),
    ({"category": "off_topic", "space": "verbouwing", "kind": "silent"}, "none"),
])
def test_a_prompt_about_the_home_store_is_held_out_with_it(prompt, store):
    # The fifth store, opened in session 25: leave-one-store-out needs its prompts in a group of their own (a key
    # of h memories raised KeyError, a silent prompt in the renovation's space counted as devprojects).
    assert prompt_groups.group_of(prompt, "store") == store
