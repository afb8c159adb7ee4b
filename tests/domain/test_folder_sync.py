"""The sync plan (memory.domain.folder_sync): one rule per row, the state file, files that do not parse."""

from __future__ import annotations

import pytest

from memory.domain.folder_sync import (
    SyncFile,
    SyncState,
    SyncStep,
    held_by,
    state_parse,
    state_render,
    sync_plan,
)

ID = "0f3a9c1e-0000-4000-8000-000000000001"


def f(sha: str | None) -> SyncFile | None:
    return None if sha is None else SyncFile(path=f"nodes/fact_{ID[:8]}.md", sha256=sha)


# folder, store, base, forgotten in the store -> step
RULES = [
    ("a", "a", "a", False, SyncStep.IN_STEP),
    ("a", "a", None, False, SyncStep.IN_STEP),
    ("b", "b", "a", False, SyncStep.IN_STEP),       # the same change on both sides
    (None, None, "a", False, SyncStep.GONE),
    ("a", "b", "a", False, SyncStep.TO_FOLDER),     # changed in the store
    (None, "a", None, False, SyncStep.TO_FOLDER),   # new in the store
    ("b", "a", "a", False, SyncStep.TO_STORE),      # changed in the folder
    ("a", None, None, False, SyncStep.TO_STORE),    # new in the folder
    (None, "a", "a", False, SyncStep.FORGET),       # removed from the folder
    ("a", None, "a", True, SyncStep.REMOVE),        # forgotten in the store
    ("a", None, "a", False, SyncStep.REMOVE),       # purged in the store
    ("b", "c", "a", False, SyncStep.CONFLICT),      # changed on both sides
    ("b", "c", None, False, SyncStep.CONFLICT),     # differs, never synced
    (None, "b", "a", False, SyncStep.KEEP),         # removed from the folder, changed in the store
    ("b", None, "a", True, SyncStep.RESTORE),       # forgotten in the store, changed in the folder
    ("a", None, None, True, SyncStep.DROP),         # never synced, forgotten in the store
]


@pytest.mark.parametrize(("folder", "store", "base", "forgotten", "step"), RULES)
def test_each_rule(folder, store, base, forgotten, step):
    [item] = sync_plan(folder={ID: f(folder)} if folder else {}, store={ID: f(store)} if store else {},
                       base={ID: f(base)} if base else {}, forgotten={ID: "x"} if forgotten else {}, held={})
    assert item.step == step


def test_conflict_steps_are_the_three_where_both_sides_changed():
    steps = {row[-1]: sync_plan(folder={ID: f(row[0])} if row[0] else {}, store={ID: f(row[1])} if row[1] else {},
                                base={ID: f(row[2])} if row[2] else {}, forgotten={ID: "x"} if row[3] else {},
                                held={})[0].conflict for row in RULES}
    assert {s for s, c in steps.items() if c} == {SyncStep.CONFLICT, SyncStep.KEEP, SyncStep.RESTORE}


def test_the_self_node_removed_from_the_folder_is_written_back_not_forgotten():
    [item] = sync_plan(folder={}, store={ID: f("a")}, base={ID: f("a")}, forgotten={}, held={}, protected={ID})
    assert (item.step, item.reason) == (SyncStep.KEEP, "the self node cannot be forgotten")


def test_a_held_memory_is_left_alone_whatever_its_sides_say():
    [item] = sync_plan(folder={}, store={ID: f("a")}, base={ID: f("a")}, forgotten={},
                       held={ID: "nodes/x.md does not parse"})
    assert (item.step, item.reason) == (SyncStep.HELD, "nodes/x.md does not parse")


def test_a_malformed_file_holds_the_memory_at_its_path_or_with_its_short_id():
    other = "77777777-0000-4000-8000-000000000002"
    base = {ID: SyncFile("nodes/renamed.md", "a"), other: SyncFile("nodes/b_77777777.md", "b")}
    assert held_by(malformed=["nodes/renamed.md"], ids=[], base=base) == {ID: "nodes/renamed.md"}
    assert held_by(malformed=["nodes/broken_77777777.md"], ids=[other], base={}) == {other: "nodes/broken_77777777.md"}
    assert held_by(malformed=["nodes/unrelated.md"], ids=[ID, other], base=base) == {}


def test_the_state_file_round_trips_one_memory_a_line():
    state = SyncState(store_key="folder:/home/dana/.ormah/memory",
                      base={ID: SyncFile("nodes/fact_0f3a9c1e.md", "ab" * 32)})
    text = state_render(state)
    assert text.count("\n") == 2
    assert state_parse(text) == state


@pytest.mark.parametrize(("text", "why"), [
    ("", "it is empty"),
    ("not json\n", "line 1 is not JSON"),
    ('{"format": "other", "version": 1, "store": "x"}\n', "its first line is not an Ormah sync header"),
    ('{"format": "ormah-sync", "version": 99, "store": "x"}\n', "it is format version 99; this Ormah reads up to 1"),
    ('{"format": "ormah-sync", "version": 1, "store": "x"}\n{"id": "a"}\n', "line 2 lacks an id, a path or a sha256"),
])
def test_a_state_file_ormah_did_not_write_is_refused_with_the_reason(text, why):
    with pytest.raises(ValueError) as exc:
        state_parse(text)
    assert str(exc.value) == why
