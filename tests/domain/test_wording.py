"""Counted nouns in messages: one memory, two memories, no memories."""

import pytest

from memory.domain.wording import counted, plural_of


@pytest.mark.parametrize(("number", "noun", "expected"), [
    (0, "memory", "0 memories"),
    (1, "memory", "1 memory"),
    (2, "memory", "2 memories"),
    (1, "related memory", "1 related memory"),
    (3, "forgotten one", "3 forgotten ones"),
    (1, "day file", "1 day file"),
    (5, "item", "5 items"),
])
def test_counted_takes_the_singular_only_for_one(number, noun, expected):
    assert counted(number, noun) == expected


@pytest.mark.parametrize(("noun", "expected"), [
    ("memory", "memories"), ("day", "days"), ("key", "keys"), ("box", "boxes"), ("match", "matches"),
    ("proposal", "proposals"),
])
def test_plural_of_regular_nouns(noun, expected):
    assert plural_of(noun) == expected


def test_counted_takes_an_explicit_plural_when_the_noun_is_not_last():
    assert (counted(1, "memory left alone", "memories left alone"),
            counted(2, "memory left alone", "memories left alone")) == ("1 memory left alone", "2 memories left alone")
