"""Counted nouns for messages a person reads: "1 memory", "2 memories", "0 memories" (pure)."""

from __future__ import annotations


def plural_of(noun: str) -> str:
    """The regular English plural of a lowercase noun: memory -> memories, day file -> day files."""
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u", ""):
        return noun[:-1] + "ies"
    if noun.endswith(("s", "x", "ch", "sh")):
        return noun + "es"
    return noun + "s"


def counted(number: int, noun: str, plural: str | None = None) -> str:
    """`number` and the noun in the number it takes: 1 is singular, everything else (0 too) plural (`plural`, else
    the regular plural of the last word: "related memory" -> "related memories")."""
    return f"{number} {noun if number == 1 else plural or plural_of(noun)}"
