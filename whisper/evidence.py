"""Answer evidence: what a memory holds of what the prompt asks, apart from how near it is (issue 11, session 18).

The logistic gate's inputs are all nearness (recall's probability, the cosine, margins between hits); they cannot tell
the right memory just below the gate from a near miss just above it. The gate reads two kinds of evidence that are
not nearness:

- the thing asked: "which notary did the club use?" asks for a notary; a note on changing the bylaws that names
  none is about the topic, not the answer (`asked_thing`, `thing_evidence`);
- the memory's own distinctive words the prompt names, IDF-weighted (`memory_cover`).

The kind of thing asked and the share of the prompt's words a memory holds were measured too and not taken
(bench/whisper_gate_evidence.py keeps them for the study).

Pure functions of texts and word weights: no model call, no statement.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from whisper.text import STOP_WORDS, topic_tokens

def memory_cover(prompt_terms: Iterable[str], memory_terms: Iterable[str], idf: Mapping[str, float],
                 top: int = 5) -> float:
    """The IDF-weighted share of the memory's `top` most distinctive words (stems, by IDF) the prompt names; 0 for a
    memory without words. Words missing from `idf` are left out (no weight known)."""
    ranked = sorted({t for t in memory_terms if t in idf}, key=lambda t: (-idf[t], t))[:top]
    total = sum(idf[t] for t in ranked)
    said = set(prompt_terms)
    return sum(idf[t] for t in ranked if t in said) / total if total else 0.0


# "which notary …", "what's the client id …", "what fly.io region …": the words after "which" / "what" (an auxiliary
# and a determiner skipped) up to the next word of a closed class, as the thing the question asks for.
_DET = r"(?:the|a|an|our|my|your|his|her|their|its|this|that|these|those)"
_WH_AUX = r"(?:'s|\u2019s|\s+(?:is|are|was|were|does|do|did|will|would|should|can|could))"
_WHICH = re.compile(rf"\b(?:which|what)(?:{_WH_AUX})?(?:\s+{_DET})?\s+((?:[\w.-]+\s+){{0,2}}[\w.-]+)", re.IGNORECASE)
# Words that end the thing asked: auxiliaries, pronouns, prepositions, and the attribute words of
# whisper.text.question_focus ("what's the frame number" asks for the frame's number: the frame is the thing).
_ENDS = frozenset("""is are was were be been do does did will would should can could has have had am i we you he she
they it me us him them to of for in on at by with from about into as and or but if when where who how why than then
so not no there here this that these those kind type sort name names called time date age number address""".split())


def asked_thing(prompt: str) -> set[str]:
    """The folded words naming what a "which …" / "what …" question asks for ("which notary did the club use" ->
    {"notary"}; "what's the frame number of the bike" -> {"frame"}); empty for any other prompt and for "what do I
    …" (no thing named)."""
    out: set[str] = set()
    for m in _WHICH.finditer(prompt):
        words = []
        for w in m.group(1).split():
            if w.lower() in _ENDS or w.lower() in STOP_WORDS:
                break
            words.append(w)
        out |= topic_tokens(" ".join(words))
    return out


def thing_evidence(prompt: str, *, title: str, content: str) -> float:
    """-1 when the question names a thing it asks for (`asked_thing`) and the memory's title and content hold none
    of its words, 1 when they hold them all, 0 when nothing is named or only some are held."""
    thing = asked_thing(prompt)
    if not thing:
        return 0.0
    held = thing & topic_tokens(f"{title}\n{content}")
    return 1.0 if held == thing else -1.0 if not held else 0.0
