"""Context packs, the pure part: policies, candidates, and the budgeted packer (docs/trust.md). Pure.

The packer walks candidates in a fixed order (kind by policy order, then score, then id), skips a memory it has
already packed, and takes each one whose line plus its warning lines fits what is left of the budget, cutting an
item's text at a word when only part of it fits. Every line's estimate includes its newline, so the estimate of
the whole text (`pack_text`) never exceeds `estimated_tokens`, which never exceeds the budget.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from memory.domain.trust import RecallWarning, VerificationWarning, warning_line

MAX_ITEM_CHARS = 1500
MIN_TEXT_CHARS = 40
MAX_BUDGET_TOKENS = 32_000
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


class PackKind(StrEnum):
    """What a pack item is."""

    CORE = "core"
    SESSION = "session"
    FACT = "fact"
    RESOURCE = "resource"
    EVIDENCE = "evidence"


class PackPolicy(StrEnum):
    """Which layers a pack draws on (seed 004's router policies)."""

    AUTO = "auto"
    TASK = "task"
    WORKSPACE = "workspace"


POLICY_KINDS: dict[PackPolicy, tuple[PackKind, ...]] = {
    PackPolicy.AUTO: (PackKind.CORE, PackKind.SESSION, PackKind.FACT, PackKind.RESOURCE, PackKind.EVIDENCE),
    PackPolicy.TASK: (PackKind.CORE, PackKind.SESSION),
    PackPolicy.WORKSPACE: (PackKind.CORE, PackKind.RESOURCE),
}


@dataclass(frozen=True, slots=True)
class PackCandidate:
    """Something that may go into a pack, with its warnings; `score` orders candidates of one kind."""

    kind: PackKind
    id: str
    text: str
    score: float
    citations: tuple[str, ...] = ()
    recall_warnings: tuple[RecallWarning, ...] = ()
    verification_warnings: tuple[VerificationWarning, ...] = ()
    label: str = ""  # what the line calls the item (a memory's type: decision, procedure...); the kind when empty


@dataclass(frozen=True, slots=True)
class PackItem:
    """One packed item as the pack answers it."""

    kind: PackKind
    id: str
    text: str
    citations: tuple[str, ...]
    score: float
    tokens: int
    truncated: bool = False
    label: str = ""


@dataclass(frozen=True, slots=True)
class ContextPack:
    """A bounded, cited view for an agent: items, their warnings and the token estimate."""

    query: str
    policy: PackPolicy
    budget_tokens: int
    items: tuple[PackItem, ...]
    estimated_tokens: int
    recall_warnings: tuple[RecallWarning, ...]
    verification_warnings: tuple[VerificationWarning, ...]


def estimate_tokens(text: str) -> int:
    """A conservative token estimate: the larger of chars/4 and words*4/3 (the whisper formatter's rule)."""
    if not text:
        return 0
    return max(math.ceil(len(text) / 4), math.ceil(len(text.split()) * 4 / 3))


def clip_words(text: str, max_chars: int) -> str:
    """The text on one line, cut at a word to at most max_chars, with "…" when anything was cut."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    if max_chars <= 1:
        return ""
    head = text[:max_chars]
    cut = head.rfind(" ")
    head = head[:cut] if cut > max_chars // 2 else head[: max_chars - 1]
    return head.rstrip(" ,.;:") + "…"


def display_id(item_id: str) -> str:
    """A memory's uuid shortened to its 8-character prefix (enough for recall_node); other ids as they are."""
    return item_id[:8] if _UUID.fullmatch(item_id) else item_id[:80]


def item_line(kind: PackKind | str, item_id: str, text: str, citations: Sequence[str], label: str = "") -> str:
    """The text line of an item: `[decision 1a2b3c4d] text (cites ev_…, ev_…)`; an event does not cite itself.

    `label` names the item (a memory's type); without one the line says the item's kind.
    """
    cited = [c for c in citations if c != item_id]
    cites = f" (cites {', '.join(cited)})" if cited else ""
    return f"[{label or PackKind(kind).value} {display_id(item_id)}] {text}{cites}"


def _line_tokens(line: str) -> int:
    return estimate_tokens(line + "\n")


def _warning_lines(candidate: PackCandidate) -> list[str]:
    return ["  " + warning_line(w) for w in (*candidate.recall_warnings, *candidate.verification_warnings)]


def _fit(candidate: PackCandidate, remaining: int) -> tuple[str, int, bool] | None:
    """(text, tokens, truncated) of the candidate within `remaining` tokens, or None when it does not fit."""
    extra = sum(_line_tokens(line) for line in _warning_lines(candidate))
    text = clip_words(candidate.text, MAX_ITEM_CHARS)
    full = _line_tokens(item_line(candidate.kind, candidate.id, text, candidate.citations, candidate.label)) + extra
    if full <= remaining:
        return text, full, text != " ".join(candidate.text.split())
    limit = len(text)
    while limit >= MIN_TEXT_CHARS:
        limit = int(limit * 0.8)
        short = clip_words(text, limit)
        cost = _line_tokens(item_line(candidate.kind, candidate.id, short, candidate.citations, candidate.label)) + extra
        if cost <= remaining and len(short) >= MIN_TEXT_CHARS:
            return short, cost, True
    return None


def _order(candidates: Sequence[PackCandidate], policy: PackPolicy) -> list[PackCandidate]:
    kinds = POLICY_KINDS[policy]
    rank = {kind: i for i, kind in enumerate(kinds)}
    allowed = [c for c in candidates if c.kind in rank]
    return sorted(allowed, key=lambda c: (rank[c.kind], -round(c.score, 6), c.id, c.text))


def pack(candidates: Sequence[PackCandidate], *, budget_tokens: int, policy: PackPolicy = PackPolicy.AUTO,
         query: str = "") -> ContextPack:
    """The pack of `candidates` under `budget_tokens`: deterministic, and never above the budget."""
    budget = max(0, min(int(budget_tokens), MAX_BUDGET_TOKENS))
    used, seen = 0, set()
    items: list[PackItem] = []
    recall: list[RecallWarning] = []
    verification: list[VerificationWarning] = []
    for cand in _order(candidates, policy):
        if cand.id in seen:
            continue
        fitted = _fit(cand, budget - used)
        if fitted is None:
            continue
        text, tokens, truncated = fitted
        seen.add(cand.id)
        used += tokens
        items.append(PackItem(kind=cand.kind, id=cand.id, text=text, citations=cand.citations,
                              score=round(cand.score, 4), tokens=tokens, truncated=truncated, label=cand.label))
        recall += cand.recall_warnings
        verification += cand.verification_warnings
    return ContextPack(query=query, policy=policy, budget_tokens=budget, items=tuple(items), estimated_tokens=used,
                       recall_warnings=tuple(recall), verification_warnings=tuple(verification))


def pack_text(result: ContextPack) -> str:
    """The pack as text for an agent: each item's line, then its warning lines (fits `estimated_tokens`)."""
    by_item: dict[str, list[str]] = {}
    for w in (*result.recall_warnings, *result.verification_warnings):
        by_item.setdefault(w.item_id, []).append("  " + warning_line(w))
    lines: list[str] = []
    for item in result.items:
        lines.append(item_line(item.kind, item.id, item.text, item.citations, item.label))
        lines += by_item.get(item.id, [])
    return "".join(line + "\n" for line in lines)
