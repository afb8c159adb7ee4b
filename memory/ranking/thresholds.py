"""One threshold vocabulary, on the scorer's calibrated probability of relevance (docs/recall.md).

- recall_floor (recall, when the caller sets no min_score): hits below it are not returned.
- no_good_match (recall, CLI, API, UI): no candidate reaches it, so the answer is "no good match".
- unknown_words_cosine (recall): no word of the query occurs in the store and no memory reaches this cosine, so
  the answer is "no good match" too.
- whisper_gate (whisper): a memory is whispered only at or above it.

The values live in the scorer file beside the weights they were calibrated with (bench/fit_scorer.py). All but
`unknown_words_cosine` are probabilities; that one is a raw cosine, because a query whose words are all unknown to
the store (nonsense, another field) has only its meaning to go on, and the scorer's probability over long pages
with many words stays above `no_good_match` for it.

Auto-links are not in this vocabulary: a remember (memory.services.links) and the maintenance auto_linker link two
memories on their raw cosine, minus the cross-space penalty, at ORMAH_AUTO_LINK_THRESHOLD (0.65). Measured on the
76 labelled links of the recall set and the labelled stores (bench/auto_links.py, docs/benchmarks.md "Auto-links"),
the probability of one memory's text recalling the other found more of them only among superseded facts
(`evolved_from`, which the conflict detector and a `supersedes` relation link as such), fewer of every other
type, and cost a recall per remember: ~9 ms of CPU with the memory's vector reused (~25 ms embedding its text as
a query) against the cosine's ~0.5 ms. So the probability threshold `auto_link` and the
`related_memories` that read it (called by no production code) were removed.
"""

from __future__ import annotations

from memory.ranking.scorer import load_scorer

DEFAULTS = {"recall_floor": 0.05, "no_good_match": 0.10, "whisper_gate": 0.5,
            "unknown_words_cosine": 0.5}
RETIRED = frozenset({"auto_link"})  # scorer files up to v5 carry it; nothing reads it (auto-links read a cosine)


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


def is_good_match(probability: float) -> bool:
    """True when a hit is good enough to be shown at all."""
    return probability >= no_good_match()
