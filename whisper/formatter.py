"""The flat whisper text (reference §2.4 step 23) under a token budget that is never exceeded. Pure.

Order of what is kept when the budget is tight: the heading and the first item's title line, the
maintenance_due line, the other title lines in rank order, then the content of the top items (up to
`content_max_chars` each, cut at a word), shortened until the estimate fits. An item's recall warnings
(docs/trust.md) are lines under its title and count as part of it: an item is never shown without them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from memory.domain.trust import warning_line
from whisper.state import Candidate
from whisper.text import estimate_tokens, truncate_words

HEADING = "# Ormah whispers"
MAINTENANCE_LINE = ("maintenance_due: run the ormah-maintenance agent in the background; continue the conversation "
                    "without blocking the user.")
TITLE_MAX_CHARS = 100
WARNING_MAX_CHARS = 160
MIN_CONTENT_CHARS = 40
# The tags agent harnesses wrap injected context in (Claude Code: <system-reminder>). A memory that holds one could
# close the wrapper and pass as the harness's own words, so its "<" becomes "‹" in the whisper (never in the file).
_WRAPPER_TAG = re.compile(
    r"<(?=\s*/?\s*(?:system[-_ ]?reminder|system|user[-_ ]?prompt[-_ ]?submit[-_ ]?hook|human|assistant|user)\b)",
    re.IGNORECASE)


def defang(text: str) -> str:
    """The text with the "<" of every harness wrapper tag (`</system-reminder>`, `<system>`, ...) turned into "‹"."""
    return _WRAPPER_TAG.sub("\u2039", text)


@dataclass(frozen=True, slots=True)
class Rendered:
    text: str
    node_ids: tuple[str, ...]  # the items that made it into the text, in order
    estimated_tokens: int


def intro(whisper_log_id: int | None) -> str:
    """The line under the heading telling the agent what the list is and how to follow up."""
    ref = f", whisper_log_id={whisper_log_id}" if whisper_log_id is not None else ""
    return ("Relevant memories, the top ones in full; use recall_node with an id for more. If one helped or misled "
            f"you: submit_feedback(node_id, signal=1 or -1{ref}).")


def title_line(item: Candidate) -> str:
    """The item's title line, followed by one line per recall warning (superseded, contradicted, ...)."""
    label = "exploring" if item.exploration else item.type
    title = truncate_words(defang(item.display_title), TITLE_MAX_CHARS)
    warnings = item.hit.warnings if item.hit is not None else ()
    return "\n".join([f"- **[{label}]** {title} (id: {item.short_id})",
                      *(f"  {truncate_words(defang(warning_line(w)), WARNING_MAX_CHARS)}" for w in warnings)])


def _content_for(item: Candidate) -> str:
    content = " ".join(item.content.split())
    return "" if content == " ".join(item.display_title.split()) else defang(content)


def _assemble(head: list[str], lines: list[str], contents: dict[int, str], tail: list[str]) -> str:
    body = []
    for i, line in enumerate(lines):
        body.append(line)
        if contents.get(i):
            body.append("  " + contents[i])
    parts = ["\n".join(head), "\n".join(body)]
    if tail:
        parts.append("\n".join(tail))
    return "\n\n".join(parts)


def render(items: Sequence[Candidate], *, budget_tokens: int, content_max_chars: int = 600, full_items: int = 2,
           whisper_log_id: int | None = None, maintenance_due: bool = False) -> Rendered:
    """The whisper markdown for ranked items, never above `budget_tokens`; empty when not even one title fits."""
    if not items:
        return Rendered("", (), 0)
    head = [HEADING, intro(whisper_log_id)]
    tail: list[str] = []
    lines = [title_line(items[0])]
    fits = lambda text: estimate_tokens(text) <= budget_tokens  # noqa: E731
    if not fits(_assemble(head, lines, {}, tail)):
        return Rendered("", (), 0)
    if maintenance_due and fits(_assemble(head, lines, {}, [MAINTENANCE_LINE])):
        tail = [MAINTENANCE_LINE]
    kept = [items[0]]
    for item in items[1:]:
        if fits(_assemble(head, lines + [title_line(item)], {}, tail)):
            lines.append(title_line(item))
            kept.append(item)
    contents: dict[int, str] = {}
    for i, item in enumerate(kept[:full_items]):
        full = _content_for(item)
        if not full:
            continue
        limit = min(content_max_chars, len(full))
        while limit >= min(MIN_CONTENT_CHARS, len(full)):
            trial = {**contents, i: truncate_words(full, limit)}
            if fits(_assemble(head, lines, trial, tail)):
                contents = trial
                break
            limit = int(limit * 0.85)
    text = _assemble(head, lines, contents, tail)
    return Rendered(text, tuple(c.node_id for c in kept), estimate_tokens(text))
