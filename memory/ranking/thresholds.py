"""One threshold vocabulary, on the scorer's calibrated probability of relevance (docs/recall.md).

- recall_floor (recall, when the caller sets no min_score): hits below it are not returned.
- no_good_match (recall, CLI, API, UI): no candidate reaches it, so the answer is "no good match".
- unknown_words_cosine (recall): no word of the query occurs in the store and no memory reaches this cosine, so
  the answer is "no good match" too.
- whisper_gate (whisper): a memory is whispered only at or above it.
- auto_link (remember, maintenance auto-linking): two memories are linked at or above it.

The values live in the scorer file beside the weights they were calibrated with (bench/fit_scorer.py). All but
`unknown_words_cosine` are probabilities; that one is a raw cosine, because a query whose words are all unknown to
the store (nonsense, another field) has only its meaning to go on, and the scorer's probability over long pages
with many words stays above `no_good_match` for it.
"""

from __future__ import annotations

from memory.ranking.scorer import load_scorer

DEFAULTS = {"recall_floor": 0.05, "no_good_match": 0.10, "whisper_gate": 0.5, "auto_link": 0.5,
            "unknown_words_cosine": 0.5}


def threshold(name: str) -> float:
    """A calibrated threshold by name (KeyError for a name outside the vocabulary)."""
    if name not in DEFAULTS:
        raise KeyError(f"unknown threshold {name!r}; known: {sorted(DEFAULTS)}")
    return load_scorer().thresholds.get(name, DEFAULTS[name])


def recall_floor() -> float:
    """Recall's default floor: hits with a lower probability of relevance are dropped."""
    return threshold("recall_floor")


def no_good_match() -> float:
    """When no candidate of a query reaches this probability, recall answers "no good match" (an empty list)."""
    return threshold("no_good_match")


def unknown_words_cosine() -> float:
    """The cosine a memory needs to answer a query none of whose words occur in the store."""
    return threshold("unknown_words_cosine")


def whisper_gate() -> float:
    """The probability a memory needs to be whispered into an agent's prompt."""
    return threshold("whisper_gate")


def auto_link_threshold() -> float:
    """The probability (of one memory being relevant to the other as a query) at which two are auto-linked."""
    return threshold("auto_link")


def is_good_match(probability: float) -> bool:
    """True when a hit is good enough to be shown at all."""
    return probability >= no_good_match()
