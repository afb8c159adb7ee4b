"""Word-level differences between two texts, for the review cards (pure: no Django, no I/O).

The diff is difflib's SequenceMatcher (autojunk off) under a work bound (maintenance/detectors/bounded_diff.py):
past it, a long repetitive pair is aligned the cheap way (common prefix and suffix, words unique on both sides),
a true diff that may show more change than there is, so a proposal cannot hold a web request for a minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from maintenance.detectors.bounded_diff import diff

MAX_CHARS = 6000  # longer texts are compared on their first MAX_CHARS characters
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Piece:
    """A run of text that both sides share ("same"), only the new side has ("added") or only the old ("removed")."""

    op: str
    text: str


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text[:MAX_CHARS])


def diff_is_cut(old: str, new: str) -> bool:
    """Whether word_diff compared only the beginnings (a text is longer than MAX_CHARS): the screen says so."""
    return max(len(old or ""), len(new or "")) > MAX_CHARS


def word_diff(old: str, new: str) -> list[Piece]:
    """The pieces that turn `old` into `new`, word by word; adjacent pieces of one kind are joined."""
    a, b = _tokens(old or ""), _tokens(new or "")
    pieces: list[Piece] = []

    def add(op: str, text: str) -> None:
        if not text:
            return
        if pieces and pieces[-1].op == op:
            pieces[-1] = Piece(op, pieces[-1].text + text)
        else:
            pieces.append(Piece(op, text))

    for tag, i1, i2, j1, j2 in diff(a, b).opcodes():
        if tag == "equal":
            add("same", "".join(a[i1:i2]))
        else:
            add("removed", "".join(a[i1:i2]))
            add("added", "".join(b[j1:j2]))
    return pieces


def similarity(old: str, new: str) -> float:
    """The share of words the two texts have in common (0..1), as the diff counts them."""
    a, b = _tokens(old or ""), _tokens(new or "")
    if not a and not b:
        return 1.0
    return diff(a, b).ratio()
