"""Filename slugs."""

from __future__ import annotations

import pytest

from memory.domain.enums import NodeType
from memory.domain.slug import node_filename, slugify
from tests.domain.test_node import make_node


@pytest.mark.parametrize(("text", "expected"), [
    ("Chose SQLite over Postgres", "chose-sqlite-over-postgres"),
    ("  Café déjà vu!  ", "cafe-deja-vu"),
    ("C++ / Rust -- interop", "c-rust-interop"),
    ("日本語だけ", "memory"),
    ("", "memory"),
    ("---", "memory"),
    ("Chose SQLite over Postgres for local-first index", "chose-sqlite-over-postgres-for-local"),
    ("a" * 50, "a" * 40),
    ("abcd " * 8 + "efgh", "abcd-abcd-abcd-abcd-abcd-abcd-abcd-abcd"),
])
def test_slugify(text, expected):
    assert slugify(text) == expected


def test_slugify_custom_length_cuts_on_hyphen():
    assert slugify("one two three", max_length=9) == "one-two"


def test_filename_uses_title():
    node = make_node(type=NodeType.DECISION, title="Chose SQLite over Postgres for local-first index")
    assert node_filename(node) == "decision_chose-sqlite-over-postgres-for-local_3f2a9c1e.md"


def test_filename_falls_back_to_content():
    assert node_filename(make_node(content="Lives in Dublin, Ireland.")) == "fact_lives-in-dublin-ireland_3f2a9c1e.md"


def test_filename_uses_first_sixty_characters_of_content():
    node = make_node(content="word " * 11 + "tail-that-is-beyond-sixty")
    assert node_filename(node) == "fact_word-word-word-word-word-word-word-word_3f2a9c1e.md"
