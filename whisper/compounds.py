"""A phrasal verb and the noun written as one word from it: "backed up" and "backups", "set up" and "setup", "clean
up" and "cleanup". The overlap filter (whisper.stages.scoring.topical_overlap) compares folded words, so "is the data
backed up anywhere?" shared no word with a note titled "Backups". Here a verb (in any of its regular forms) followed
by a particle gives the closed compound when that compound is an ordinary English word (`whisper.words.common_word`,
the embedding model's tokenizer's whole words): no list of compounds, no store's words. Pure: strings in, words out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from whisper.text import fold
from whisper.words import common_word

PARTICLES = ("up", "out", "off", "over", "down")  # "in" and "back" left out: "log in" / "login" is no tokenizer word
_PHRASAL = re.compile(r"\b([A-Za-z]{2,})\s+(" + "|".join(PARTICLES) + r")\b", re.IGNORECASE)


def _bases(verb: str) -> Iterator[str]:
    """The verb as written and its regular base forms: "backed" -> "back", "setting" -> "set", "makes" -> "make"."""
    yield verb
    for suffix in ("ed", "ing", "s"):
        if verb.endswith(suffix) and len(verb) - len(suffix) >= 2:
            stem = verb[: -len(suffix)]
            yield stem
            if suffix != "s":
                yield stem + "e"  # "lined up" -> "line"
            if len(stem) >= 3 and stem[-1] == stem[-2]:
                yield stem[:-1]  # "setting" -> "set"


def compounds(text: str) -> set[str]:
    """The folded closed compounds of the text's phrasal verbs ("backed up" -> "backup", "set up" -> "setup")."""
    out = set()
    for verb, particle in _PHRASAL.findall(text):
        for base in _bases(verb.lower()):
            word = base + particle.lower()
            if len(base) >= 2 and common_word(word):
                out.add(fold(word))
                break
    return out
