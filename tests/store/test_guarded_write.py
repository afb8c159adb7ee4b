"""The guarded write (memory.atomic): an edit on disk that lands at any point of a write is never lost.

Each test makes a person's edit land at one exact point of the protocol by running it just before the real
exchange (or rename aside) call; the OS calls themselves are real.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory import exchange, files
from memory.domain.markdown import render
from memory.errors import WriteConflict
from memory.store import MarkdownStore
from tests.store.test_store import make_node


@pytest.fixture
def store(tmp_path: Path) -> MarkdownStore:
    return MarkdownStore(tmp_path / "memory")


def _hand(path: Path, content: str, *, in_place: bool = False) -> bytes:
    data = render(make_node(content=content)).encode("utf-8")
    if in_place:
        path.write_bytes(data)
    else:
        tmp = path.with_name(".hand.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return data


def _conflicts(store: MarkdownStore) -> list[bytes]:
    return sorted(p.read_bytes() for p in store.conflicts_dir.glob("*.md"))


def _app() -> bytes:
    return render(make_node(content="App version.")).encode("utf-8")


def _edit_on_rename(monkeypatch, path: Path) -> list[bytes]:
    """A hand edit of `path` made just before the first os.rename of it: the list holds the edit once it is made."""
    real = os.rename
    edits: list[bytes] = []

    def edit_then_rename(a, b, *args, **kwargs):
        if not edits and Path(a) == path:
            edits.append(_hand(path, "Edited by hand."))
        return real(a, b, *args, **kwargs)

    monkeypatch.setattr(os, "rename", edit_then_rename)
    return edits


@pytest.mark.parametrize("in_place", [False, True])
def test_an_edit_just_before_the_swap_stays_live_and_the_app_version_is_kept(store, monkeypatch, in_place):
    stored = files.write_node(store, make_node())
    real = exchange.exchange
    edits: list[bytes] = []

    def edit_then_swap(a, b):
        if not edits:
            edits.append(_hand(stored.path, "Edited by hand.", in_place=in_place))
        real(a, b)

    monkeypatch.setattr(exchange, "exchange", edit_then_swap)
    with pytest.raises(WriteConflict):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert (stored.path.read_bytes(), _conflicts(store)) == (edits[0], [_app()])


def test_an_edit_between_the_two_swaps_goes_live_and_the_one_it_displaced_is_kept(store, monkeypatch):
    stored = files.write_node(store, make_node())
    real = exchange.exchange
    edits: list[bytes] = []

    def interleave(a, b):
        if len(edits) == 0:
            edits.append(_hand(stored.path, "First hand edit."))
        elif len(edits) == 1:
            edits.append(_hand(stored.path, "Second hand edit, over the app's version."))
        real(a, b)

    monkeypatch.setattr(exchange, "exchange", interleave)
    with pytest.raises(WriteConflict):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert stored.path.read_bytes() == edits[1]
    assert _conflicts(store) == sorted([edits[0], _app()])


def test_without_an_exchange_call_the_fallback_keeps_the_edit_too(store, monkeypatch):
    stored = files.write_node(store, make_node())
    monkeypatch.setattr(exchange, "_call", lambda: None)
    edits = _edit_on_rename(monkeypatch, stored.path)
    with pytest.raises(WriteConflict):
        files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert (stored.path.read_bytes(), _conflicts(store)) == (edits[0], [_app()])


def test_without_an_exchange_call_an_unchanged_file_is_replaced(store, monkeypatch):
    stored = files.write_node(store, make_node())
    monkeypatch.setattr(exchange, "_call", lambda: None)
    files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert (stored.path.read_bytes(), sorted(os.listdir(store.nodes_dir))) == (_app(), [stored.path.name])


def test_a_guarded_write_leaves_no_temp_file(store):
    stored = files.write_node(store, make_node())
    files.write_node(store, make_node(content="App version."), expected_hash=stored.hash)
    assert sorted(os.listdir(store.nodes_dir)) == [stored.path.name]


def test_forget_puts_back_a_file_edited_while_it_was_being_forgotten(store, monkeypatch):
    stored = files.write_node(store, make_node())
    edits = _edit_on_rename(monkeypatch, stored.path)
    with pytest.raises(WriteConflict):
        files.soft_delete(store, make_node().id, now=make_node().created, expected_hash=stored.hash)
    assert (stored.path.read_bytes(), store.deleted_paths()) == (edits[0], [])
