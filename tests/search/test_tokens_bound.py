"""The terms' tokens a process keeps stay few (issue 13, session 26): like the document counts
(tests/search/test_doc_counts_bound.py), the map of a term to node_fts's tokens grows with the prompts a worker
serves, so it keeps at most 16,384 terms of at most 64 characters; what it answers is the tokenizer's either way."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.backends import sqlite_fulltext

pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite backend's tokenizer map")


def _fresh(terms: list[str]) -> dict[str, tuple[str, ...]]:
    sqlite_fulltext._TOKENS.clear()
    with connection.cursor() as cur:
        return sqlite_fulltext._tokens(terms, cur)


def test_twenty_thousand_new_terms_leave_at_most_16384_kept(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    sqlite_fulltext._TOKENS.clear()
    with connection.cursor() as cur:
        for start in range(0, 20_000, 500):  # a prompt's terms at a time, each new
            sqlite_fulltext._tokens([f"gardenterm{i}" for i in range(start, start + 500)], cur)
        assert 0 < len(sqlite_fulltext._TOKENS) <= 16_384
        assert sqlite_fulltext._tokens(["Gardens", "gardenterm7"], cur) == _fresh(["Gardens", "gardenterm7"]) == {
            "Gardens": ("garden",), "gardenterm7": ("gardenterm7",)}


def test_a_term_over_64_characters_is_tokenized_but_not_kept(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    long_term = "gardens" + "x" * 58  # 65 characters: a pasted hash or blob, asked once
    edge = "gardens" + "k" * 57  # 64 characters: kept
    assert _fresh([long_term, edge, "Sensors"]) == {long_term: (long_term,), edge: (edge,), "Sensors": ("sensor",)}
    assert {term for _, term in sqlite_fulltext._TOKENS} == {edge, "Sensors"}


def test_the_keys_of_many_calls_share_one_declaration_string(mem, transactional_db):
    # each call reads node_fts's declaration afresh; a key kept the string of the call that made it, so a worker
    # held one ~87-byte copy per call for as long as one of its entries lived
    mem("The garden sensors report soil moisture", auto_link=False)
    sqlite_fulltext._TOKENS.clear()
    with connection.cursor() as cur:
        for i in range(5):
            sqlite_fulltext._tokens([f"gardenterm{i}"], cur)
    assert len({id(tokenize) for tokenize, _ in sqlite_fulltext._TOKENS}) == 1
