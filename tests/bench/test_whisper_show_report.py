"""bench/whisper_show_report.py: figures per batch and split from saved --show outputs, scored as the bench does."""

from bench.whisper_show_report import read_show, report

DATASET = {"prompts": [
    {"id": "a1", "kind": "inject", "category": "project", "expect": ["p1"], "accept": ["p2"], "split": "dev", "batch": 1},
    {"id": "a2", "kind": "inject", "category": "follow_up", "expect": ["p3"], "split": "dev", "batch": 1},
    {"id": "a3", "kind": "silent", "category": "near_miss", "split": "dev", "batch": 1},
    {"id": "b1", "kind": "inject", "category": "project", "expect": ["p4"], "split": "test", "batch": 2},
    {"id": "b2", "kind": "silent", "category": "near_miss", "split": "test", "batch": 2},
]}

SHOW = """seeded 5 memories in 1.0 s CPU
dev a1    inject injected               ['p1', 'p2'] expect=['p1']
dev a2    inject silent:below_gate (served by the history) [] expect=['p3']
dev a3    silent injected               ['p9'] expect=[]
dev: prompts 3, inject 2
test b1    inject silent:below_gate      [] expect=['p4']
test b2    silent silent:below_gate      [] expect=[]
"""


def test_a_show_file_is_read_and_scored_per_batch_and_split(tmp_path):
    path = tmp_path / "show.txt"
    path.write_text(SHOW)
    outcomes = read_show(path)
    assert outcomes["a1"] == (["p1", "p2"], [])
    assert outcomes["a2"] == ([], ["p3"])
    lines = report(DATASET, [outcomes])
    assert lines[0] == "dev  batch 1      1.000 (2/2) / 0.667 (2/3) / 0.000 (0/1)"
    assert "test batch 2      0.000 (0/1) / - / 1.000 (1/1)" in lines
    assert any(line.startswith("test all ") for line in lines)
