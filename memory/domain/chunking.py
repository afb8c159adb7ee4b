"""Long memories as passages: split at markdown headings, then paragraphs, then sentences, then words, so that
each passage fits the embedding model's window (MiniLM reads 256 tokens; 700 characters of English prose are
about 160-200 tokens, code and URLs run denser, so the budget leaves room for the title in front).

A memory's own vector embeds its title and the first HEAD_CHARS characters of content (`embedding_text`); a memory
longer than that also gets one vector per passage of its whole content, so a question about its middle finds it.
Pure functions over text: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

HEAD_CHARS = 512  # what embedding_text takes of the content for the memory's own vector
MAX_CHARS = 700
MAX_PASSAGES = 128  # 128 x 700 characters covers the API's 64 KiB cap
VERSION = 1

_HEADING = re.compile(r"^#{1,6}[ \t]", re.M)
_PARAGRAPH = re.compile(r"\n[ \t]*\n")
_SENTENCE = re.compile(r"(?<=[.!?;:])\s+|\n")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of a memory's content: ordinal (1-based; 0 is the memory's own vector), start and end offsets."""

    ordinal: int
    start: int
    end: int


def needs_passages(content: str) -> bool:
    """True when the memory's own vector does not cover its whole content."""
    return len(content) > HEAD_CHARS


def _cuts(content: str, lo: int, hi: int, pattern: re.Pattern, at_start: bool) -> list[tuple[int, int]]:
    points = [lo]
    for match in pattern.finditer(content, lo, hi):
        point = match.start() if at_start else match.end()
        if lo < point < hi:
            points.append(point)
    points.append(hi)
    return [(a, b) for a, b in zip(points, points[1:]) if b > a]


def _hard_cuts(content: str, lo: int, hi: int, limit: int) -> list[tuple[int, int]]:
    """Cuts at the last whitespace before each `limit` characters (or at `limit` inside one long word)."""
    spans = []
    while hi - lo > limit:
        spaces = [m.start() for m in _SPACE.finditer(content, lo + limit // 2, lo + limit)]
        cut = spaces[-1] if spaces else lo + limit
        spans.append((lo, cut))
        lo = cut
    spans.append((lo, hi))
    return spans


def _pack(spans: list[tuple[int, int]], limit: int) -> list[tuple[int, int]]:
    """Join neighbouring spans while the joined span stays within `limit`."""
    packed: list[tuple[int, int]] = []
    for start, end in spans:
        if packed and end - packed[-1][0] <= limit:
            packed[-1] = (packed[-1][0], end)
        else:
            packed.append((start, end))
    return packed


_LEVELS = ((_HEADING, True), (_PARAGRAPH, False), (_SENTENCE, False))


def _split(content: str, lo: int, hi: int, limit: int, level: int) -> list[tuple[int, int]]:
    if hi - lo <= limit:
        return [(lo, hi)]
    if level == len(_LEVELS):
        return _hard_cuts(content, lo, hi, limit)
    pattern, at_start = _LEVELS[level]
    parts = _cuts(content, lo, hi, pattern, at_start)
    if len(parts) == 1:
        return _split(content, lo, hi, limit, level + 1)
    pieces = [piece for a, b in parts for piece in _split(content, a, b, limit, level + 1)]
    return _pack(pieces, limit)


def _trimmed(content: str, start: int, end: int) -> tuple[int, int]:
    while start < end and content[start].isspace():
        start += 1
    while end > start and content[end - 1].isspace():
        end -= 1
    return start, end


def passages(content: str, limit: int = MAX_CHARS) -> list[Passage]:
    """The passages of a long memory's content (none when its own vector covers it), at most MAX_PASSAGES."""
    if not needs_passages(content):
        return []
    out: list[Passage] = []
    for start, end in _split(content, 0, len(content), limit, 0):
        start, end = _trimmed(content, start, end)
        if end > start:
            out.append(Passage(ordinal=len(out) + 1, start=start, end=end))
        if len(out) == MAX_PASSAGES:
            break
    return out


def passage_text(title: str | None, content: str, passage: Passage) -> str:
    """The text embedded for a passage: the memory's title, then the passage."""
    return f"{title or ''} {content[passage.start:passage.end]}".strip()
