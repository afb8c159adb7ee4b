"""Cheap text signals: tokens, overlap, title edit distance, and what changed between two statements."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+", re.UNICODE)
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?![\w])")
_ISO_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")
_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
STOPWORDS = frozenset(
    "a an and are as at be been but by for from has have i in is it its my of on or our so that the their them "
    "there these this to was we were will with you your all every each any".split()
)
NEGATIONS = frozenset("not no never none nothing cannot can't don't doesn't didn't isn't aren't wasn't won't".split())
CHANGE_PHRASES = ("no longer", "anymore", "switched", "moved to", "migrated", "replaced", "instead of", "now use",
                  "changed to", "stopped", "raised to", "lowered to", "increased to", "decreased to", "deprecated")
DATE_WORDS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays january february march april may june july august september october november december "
    "yesterday today tomorrow".split()
)


def tokens(text: str) -> list[str]:
    """Lowercased word tokens (punctuation dropped, so "SQLite." and "sqlite" are the same token)."""
    return _WORD.findall(text.lower().replace("n't", "nt"))


def content_words(text: str) -> set[str]:
    """Tokens minus stop words, with a plural `s` dropped: the words that carry the statement."""
    words = set()
    for tok in tokens(text):
        if tok in STOPWORDS:
            continue
        words.add(tok[:-1] if len(tok) > 3 and tok.endswith("s") and not tok.endswith("ss") else tok)
    return words


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 0 for two empty sets."""
    union = a | b
    return len(a & b) / len(union) if union else 0.0


def levenshtein(a: str, b: str) -> int:
    """Edit distance (insertions, deletions, substitutions), two rows of memory."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def title_ratio(a: str | None, b: str | None) -> float | None:
    """1 − levenshtein / max length on lowercased, trimmed titles; None when either title is missing."""
    a, b = (a or "").strip().lower(), (b or "").strip().lower()
    if not a or not b:
        return None
    return 1.0 - levenshtein(a, b) / max(len(a), len(b))


def numbers(text: str) -> set[str]:
    """Numbers as written (thousands separators dropped), dates excluded."""
    return {n.replace(",", "") for n in _NUMBER.findall(_ISO_DATE.sub(" ", text))} - set(_YEAR.findall(text))


def dates(text: str) -> set[str]:
    """ISO dates, years, weekday and month names."""
    low = text.lower()
    return set(_ISO_DATE.findall(low)) | set(_YEAR.findall(low)) | (set(tokens(low)) & DATE_WORDS)


def negated(text: str) -> bool:
    """True when the statement holds a negation word."""
    return any(tok in NEGATIONS or tok.endswith("nt") and tok[:-2] + "n't" in NEGATIONS for tok in tokens(text))


def has_change_phrase(text: str) -> bool:
    """True when the statement says something changed ("switched to", "no longer", ...)."""
    low = text.lower()
    return any(phrase in low for phrase in CHANGE_PHRASES)
