"""What a prompt asks, apart from the context the user wrote around it (docs/whisper.md, stage 5 `retrieve`).

A prompt as a user writes it is often context and then the question: "ok I did something stupid. ran a DELETE
without a where on prod about 10 min ago. can we get the data back?". Recall weighs every word of it, so the
context's words (and a pasted log's) can outweigh the question's. `asked` returns the question sentence(s) alone
when the prompt also holds other sentences, so that whisper can search with them too. Pure: strings in and out.
"""

from __future__ import annotations

import re

# A sentence ends at ".", "!" or "?" followed by white space, or at a line break. A dot inside a word ("3.10",
# "requests.get") is not an end.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\s*\n\s*")
MIN_LETTERS = 8  # a question of fewer letters ("why?", "ok?") says too little to search with alone


def sentences(text: str) -> list[str]:
    """The text's sentences and lines, in order, without blank ones."""
    return [s.strip() for s in _SENTENCE_END.split(text.strip()) if s.strip()]


def asked(prompt: str) -> str | None:
    """The prompt's question sentences (those ending with "?"), joined, when the prompt holds other sentences
    besides them; None when it holds none, only questions, or questions too short to search with alone."""
    parts = sentences(prompt)
    questions = [s for s in parts if s.endswith("?")]
    if not questions or len(questions) == len(parts):
        return None
    text = " ".join(questions)
    return text if sum(ch.isalpha() for ch in text) >= MIN_LETTERS else None
