"""bench.whisper_scale: which LoCoMo turns become distractors, and the table's counts read from show files."""

from datetime import UTC, datetime

import pytest

from bench.locomo_data import Conversation, Turn
from bench.prompt_groups import STORE_OF_KEY
from bench.whisper_scale import KEY_PREFIX, is_distractor, pick, read_run, row, table

DAY = datetime(2023, 5, 8, tzinfo=UTC)


def _conv(name: str, n: int) -> Conversation:
    return Conversation(name, tuple(Turn(f"D1:{i}", f"{name} says {i}", DAY) for i in range(1, n + 1)), ())


def test_pick_takes_turns_round_robin_and_a_smaller_n_is_a_prefix_of_a_larger():
    convs = [_conv("a", 3), _conv("b", 1), _conv("c", 2)]
    keys = [k for k, _ in pick(convs, 6)]
    assert keys == ["x:a:D1:1", "x:b:D1:1", "x:c:D1:1", "x:a:D1:2", "x:c:D1:2", "x:a:D1:3"]
    for n in range(7):
        assert [k for k, _ in pick(convs, n)] == keys[:n]
    assert [t.text for _, t in pick(convs, 2)] == ["a says 1", "b says 1"]


def test_pick_refuses_more_turns_than_the_split_has():
    with pytest.raises(ValueError, match="between 0 and 6"):
        pick([_conv("a", 3), _conv("b", 3)], 7)
    with pytest.raises(ValueError):
        pick([_conv("a", 3)], -1)


def test_a_distractor_key_is_no_labelled_store_s_key():
    assert KEY_PREFIX[0] not in STORE_OF_KEY
    assert is_distractor("x:conv-26:D1:3")
    assert not is_distractor("p023") and not is_distractor("k001")


PROMPTS = [
    {"id": "a", "kind": "inject", "expect": ["p1"], "accept": ["p2"]},
    {"id": "b", "kind": "inject", "expect": ["p3"]},
    {"id": "c", "kind": "silent"},
    {"id": "d", "kind": "silent"},
]


def _show(tmp_path, name: str, n: int | str | None, lines: list[str], cpu: bool = True):
    text = ([f"# distractors {n}"] if n is not None else []) + lines
    if cpu:
        text.append("# whisper CPU: 9 calls, mean 40.00 ms, median 35.50 ms, p95 80.25 ms (process time), load 1 1 1")
    path = tmp_path / f"{name}.txt"
    path.write_text("\n".join(text) + "\n")
    return path


def test_row_counts_fully_right_made_broken_and_injected_distractors(tmp_path):
    base = read_run(_show(tmp_path, "n0", 0, [
        "dev a     inject injected               ['p1'] expect=['p1']",
        "dev b     inject silent:below_gate      [] expect=['p3']",
        "dev c     silent silent:below_gate      [] expect=[]",
        "dev d     silent injected               ['p9'] expect=[]",
    ]))
    run = read_run(_show(tmp_path, "n500", 500, [
        "dev a     inject injected               ['p1', 'x:conv-26:D1:3'] expect=['p1']",
        "dev b     inject injected               ['p3'] expect=['p3']",
        "dev c     silent injected               ['x:conv-41:D2:1'] expect=[]",
        "dev d     silent injected               ['p9'] expect=[]",
    ]))
    assert run["n"] == 500 and not run["outdated"] and run["cpu"] == {"calls": 9, "p50": 35.5, "p95": 80.25}
    r = row(PROMPTS, run, base)
    assert (r["right"], r["made"], r["broken"]) == (1, 1, 2)  # b made; a and c broken by a distractor
    assert (r["distractors"], r["with_distractor"], r["injected"]) == (2, 2, 5)
    assert (r["hits"], r["inject"], r["silent_ok"], r["silent"], r["correct"]) == (2, 2, 0, 2, 2)
    same = row(PROMPTS, base, base)
    assert (same["right"], same["made"], same["broken"], same["distractors"]) == (2, 0, 0, 0)


def test_a_run_without_its_header_or_cpu_line_reads_as_unknown(tmp_path):
    run = read_run(_show(tmp_path, "bare", None, ["dev c     silent silent:below_gate      [] expect=[]"], cpu=False))
    assert run["n"] is None and not run["outdated"] and run["cpu"] is None and set(run["outcomes"]) == {"c"}


def test_table_has_one_row_per_file_against_the_first(tmp_path):
    first = _show(tmp_path, "n0", 0, [])
    lines = table([first, _show(tmp_path, "n2000", 2000, [], cpu=False), _show(tmp_path, "o", "500 outdated", [])])
    assert len(lines) == 5 and lines[4].startswith("| 500 outdated | 0 |")
    assert lines[2].startswith("| 0 | 0 |") and "35.5 / 80.2" in lines[2]
    assert lines[3].startswith("| 2000 | 0 |") and lines[3].endswith("| - |")
