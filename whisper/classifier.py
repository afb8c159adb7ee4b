"""Intent classification by nearest archetype sentences (reference §2.5).

Categories: conversational, continuation, identity, temporal; a prompt matching none is `technical`.
The archetypes are embedded once per process and embedder; classification itself is a pure function of vectors.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

import numpy as np

CONVERSATIONAL = "conversational"
CONTINUATION = "continuation"
IDENTITY = "identity"
TEMPORAL = "temporal"
TECHNICAL = "technical"

ARCHETYPES: dict[str, tuple[str, ...]] = {
    TEMPORAL: (
        "what did we do yesterday",
        "recap what we worked on this week",
        "summarize our progress from last week",
        "what happened in the last few days",
        "what did we decide earlier today",
        "catch me up on recent changes",
        "what have I been working on lately",
        "show me what changed since monday",
    ),
    IDENTITY: (
        "what do you know about me",
        "who am I",
        "what is my name",
        "where do I live",
        "what do I do for a living",
        "what are my preferences",
        "tell me about myself",
        "what languages do I speak",
        "what is my job title",
        "how do I like to work",
        "what are my hobbies",
        "which tools do I prefer",
        "what is my background",
        "do you remember my name",
        "what are my goals",
        "what kind of person am I",
    ),
    CONTINUATION: (
        "continue where we left off",
        "where were we",
        "let's pick up from before",
        "what about that",
        "and the other one",
        "go on with the previous step",
        "same thing for the other file",
        "what about the second option",
        "do that again but for the tests",
        "back to what we were doing",
        "and what about the rest",
        "keep going with it",
    ),
    CONVERSATIONAL: (
        "hello how are you",
        "hi there",
        "thanks for the help",
        "ok sounds good",
        "please continue",
        "good morning",
        "that is great thank you",
        "nice work",
        "you are awesome",
        "see you later",
        "how is it going",
        "lol that's funny",
    ),
}

_LOCK = threading.Lock()
_MATRICES: dict[str, dict[str, np.ndarray]] = {}


@dataclass(frozen=True, slots=True)
class Intent:
    categories: tuple[str, ...]  # sorted; ("technical",) when nothing matched
    scores: dict[str, float]

    def has(self, category: str) -> bool:
        return category in self.categories

    @property
    def only(self) -> str | None:
        """The single category when there is exactly one."""
        return self.categories[0] if len(self.categories) == 1 else None

    @property
    def label(self) -> str:
        return "+".join(self.categories)


def archetype_matrices(embedder) -> dict[str, np.ndarray]:
    """The archetype vectors per category for this embedder (embedded once per process)."""
    key = getattr(embedder, "model_id", repr(embedder))
    with _LOCK:
        if key not in _MATRICES:
            names = list(ARCHETYPES)
            texts = [t for n in names for t in ARCHETYPES[n]]
            vectors = np.asarray(embedder.embed_documents(texts), dtype=np.float32)
            out, start = {}, 0
            for name in names:
                count = len(ARCHETYPES[name])
                out[name] = vectors[start:start + count]
                start += count
            _MATRICES[key] = out
        return _MATRICES[key]


def classify(prompt_vec: np.ndarray, matrices: dict[str, np.ndarray], *, threshold: float) -> Intent:
    """The intent of a prompt vector: categories whose best archetype cosine reaches the threshold, arbitrated."""
    scores = {name: round(float(np.max(m @ prompt_vec)), 4) for name, m in matrices.items()}
    matched = {name for name, score in scores.items() if score >= threshold}
    if CONVERSATIONAL in matched and len(matched) > 1:
        conv = scores[CONVERSATIONAL]
        if any(scores[n] >= conv - 0.15 for n in matched if n != CONVERSATIONAL):
            matched.discard(CONVERSATIONAL)
        else:
            matched = {CONVERSATIONAL}
    if CONTINUATION in matched and IDENTITY in matched:
        matched.discard(CONTINUATION)
    return Intent(categories=tuple(sorted(matched)) or (TECHNICAL,), scores=scores)
