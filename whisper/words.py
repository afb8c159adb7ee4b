"""Ordinary English words: the whole words of the embedding model's tokenizer (BERT uncased: the ~22,000 commonest
English words among its 30,522 entries), read once per process. Whisper reads a word outside them as a name: a
project ("routewise"), a library ("loguru"), a pet ("Biscuit"); `whisper.text.is_request` also reads an inflected form
by them ("limped" is "limp" + "-ed"; "embed" and "speed" are no inflection)."""

from __future__ import annotations

import json
from functools import lru_cache


@lru_cache(maxsize=1)
def english_words() -> frozenset[str]:
    """The tokenizer's whole alphabetic words (lowercase), read once per process."""
    from memory.embeddings import TOKENIZER_DIR

    vocab = json.loads((TOKENIZER_DIR / "tokenizer.json").read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(w for w in vocab if w.isalpha())


def common_word(word: str) -> bool:
    """Whether a word is an ordinary English word (in the tokenizer's vocabulary, or its plural): "rich", "requests",
    "docs", "bakery"; not "loguru", "httpx", "routewise", "biscuit"."""
    words, low = english_words(), word.lower()
    return low in words or (low.endswith("s") and (low[:-1] in words or (low.endswith("es") and low[:-2] in words)))
