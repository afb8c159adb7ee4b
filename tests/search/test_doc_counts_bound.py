"""The document counts a process keeps stay small (issue 13, session 26): every prompt brings terms never asked
before (its adjacent word pairs above all), so the cache grows with the requests served, not with the store; it
keeps at most 8,192 terms of at most 64 characters, and what it answers is a fresh count either way."""

from __future__ import annotations

from memory.backends import backend
from memory.search import candidates
from memory.search.candidates import doc_counts, store_state


def _held():
    return candidates._df[store_state()[0]]


def test_ten_thousand_new_terms_leave_at_most_8192_kept(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    terms = [f"gardenterm{i}" for i in range(10_000)] + ["garden", "soil"]
    for start in range(0, len(terms), 250):  # a prompt's terms at a time, each read once
        doc_counts(terms[start:start + 250])
    assert 0 < len(_held().counts) <= 8_192
    asked = ["garden", "soil", "gardenterm3", "gardenterm9999", "zeppelin"]
    assert doc_counts(asked) == backend().doc_counts(asked, candidates.DF_CAP) == {
        "garden": 1, "soil": 1, "gardenterm3": 0, "gardenterm9999": 0, "zeppelin": 0}


def test_a_term_over_64_characters_is_counted_but_not_kept(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    long_term = "garden" + "x" * 59  # 65 characters: a pasted hash or blob, asked once
    edge = "garden" + "y" * 58  # 64 characters: kept
    assert doc_counts([long_term, edge, "garden"]) == {long_term: 0, edge: 0, "garden": 1}
    kept = {term for term, _ in _held().counts}
    assert kept == {edge, "garden"}
