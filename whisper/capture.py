"""Memory candidates from a transcript without an LLM: explicit "remember that …", decisions, preferences. Pure.

Only the user's own words are mined (an assistant's summary of a decision is not the user's decision). Each
sentence yields at most one candidate; duplicates inside one transcript are dropped here, duplicates of stored
memories by the capture service (embedding similarity).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from whisper.transcript import Turn

MIN_CHARS = 12
MAX_CHARS = 500

REMEMBER = re.compile(
    r"^(?:please\s+|pls\s+|also\s+|and\s+)?(?:remember|note|keep in mind|don'?t forget|never forget|fyi)"
    r"(?:\s+(?:that|this))?\s*[:,-]?\s+(?P<body>.+)$", re.IGNORECASE,
)
DECISION = re.compile(
    r"\b(?:(?:we|i)(?:'ve| have)?\s+decided\s+(?:to|that|on|against)|let'?s\s+(?:go|stick)\s+with|"
    r"decision\s*:|we(?:'ll| will)\s+(?:use|go with|stick with|switch to)|we'?re\s+going\s+(?:with|to use)|"
    r"(?:the\s+)?plan\s+is\s+to|from\s+now\s+on\s+we)\b", re.IGNORECASE,
)
PREFERENCE = re.compile(
    r"(?:^i\s+(?:really\s+|strongly\s+)?(?:prefer|like|love|hate|dislike|don'?t\s+like|do\s+not\s+like|"
    r"always|never|want\s+you\s+to\s+(?:always|never))\b|\bmy\s+(?:favou?rite|preferred)\b|"
    r"^(?:always|never)\s+(?:use|do|write|run|add|put|call|commit|push)\b|^please\s+(?:always|never)\b|"
    r"\bfrom\s+now\s+on\s+(?:always|never|use|please)\b)", re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'(])|\n+")
_QUESTION_START = re.compile(r"^(?:what|why|how|when|where|who|which|can|could|would|should|do|does|is|are)\b",
                             re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Extracted:
    content: str
    type: str  # fact | decision | preference
    rule: str  # remember | decision | preference
    turn: int  # index of the user turn it came from


def sentences(text: str) -> list[str]:
    """The text split into trimmed sentences and lines (code fences dropped)."""
    text = re.sub(r"```.*?```", " ", text, flags=re.DOTALL)
    return [s.strip(" -*•\t") for s in _SENTENCE.split(text) if s and s.strip(" -*•\t")]


def _kind(text: str) -> str:
    if PREFERENCE.search(text):
        return "preference"
    if DECISION.search(text):
        return "decision"
    return "fact"


def _tidy(text: str) -> str:
    text = " ".join(text.split()).strip()
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!?":
        text += "."
    return text


def classify_sentence(sentence: str) -> tuple[str, str, str] | None:
    """(content, type, rule) for a sentence worth remembering, or None."""
    if sentence.endswith("?") or len(sentence) < MIN_CHARS:
        return None
    match = REMEMBER.match(sentence)
    if match:
        body = match.group("body").strip()
        return (_tidy(body), _kind(body), "remember") if len(body) >= MIN_CHARS else None
    if _QUESTION_START.match(sentence):
        return None
    if PREFERENCE.search(sentence):
        return _tidy(sentence), "preference", "preference"
    if DECISION.search(sentence):
        return _tidy(sentence), "decision", "decision"
    return None


def extract_candidates(turns: Iterable[Turn]) -> list[Extracted]:
    """Candidates from the user turns, in order, without repeats (compared case- and space-insensitively)."""
    found: list[Extracted] = []
    seen: set[str] = set()
    for index, turn in enumerate(turns):
        if turn.role != "user":
            continue
        for sentence in sentences(turn.text):
            picked = classify_sentence(sentence)
            if picked is None:
                continue
            content, kind, rule = picked
            key = " ".join(content.lower().split())
            if key in seen or len(content) > MAX_CHARS:
                continue
            seen.add(key)
            found.append(Extracted(content=content, type=kind, rule=rule, turn=index))
    return found
