"""The token-diff comparison behind the no-LLM duplicate verdict (pure: no database, no embedder)."""

from __future__ import annotations

import pytest

from maintenance.detectors.compare import compare


@pytest.mark.parametrize(("a", "b"), [
    ("Recipe: lentil soup, 200 g lentils, 1 onion", "Recipe: pea soup, 200 g peas, 1 onion"),
    ("The thesis is written in English at home", "The thesis is written in German at work"),
    ("Robin prefers short answers", "Robin prefers examples in Python"),
])
def test_words_swapped_in_place_are_a_different_fact(a, b):
    assert compare("", a, "", b).substitution is True


@pytest.mark.parametrize(("a", "b"), [
    ("Backups are encrypted with a key held in Bitwarden", "The backup encryption key is held in Bitwarden"),
    ("We deployed the docs site to Netlify", "We deploy the docs site to Netlify"),
    ("Aiko is my running coach", "My running coach is Aiko"),
    ("Robin prefers short answers without preamble", "Robin likes short answers with no preamble"),
])
def test_other_forms_of_a_word_and_moved_words_are_no_swap(a, b):
    assert compare("", a, "", b).substitution is False


def test_an_antonym_among_other_changes_opposes_the_sides():
    cmp = compare("", "The CSV importer trims whitespace in every cell",
                  "", "The CSV importer keeps whitespace in every cell untouched")
    assert (cmp.slot, cmp.opposed) == (None, True)


def test_a_paraphrase_is_not_opposed():
    cmp = compare("", "Lena handles on-call for the data pipeline this quarter",
                  "", "This quarter Lena is on call for the data pipeline")
    assert cmp.opposed is False


@pytest.mark.parametrize(("a", "b", "same"), [
    ("encrypted", "encryption", True), ("deploys", "deploying", True), ("schedule", "scheduled", True),
    ("sign", "signal", False), ("port", "portal", False), ("pass", "passive", False), ("print", "printer", False),
    ("final", "finally", False),
])
def test_other_forms_of_one_word_are_not_other_words_with_a_suffix(a, b, same):
    from maintenance.detectors.compare import _variant

    assert _variant(a, b) is same
