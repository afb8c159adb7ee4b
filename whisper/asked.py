"""What a prompt asks, apart from the context the user wrote around it (docs/whisper.md, stage 5 `retrieve`).

A prompt as a user writes it is often context and then the question: "ok I did something stupid. ran a DELETE
without a where on prod about 10 min ago. can we get the data back?". Recall weighs every word of it, so the
context's words (and a pasted log's) can outweigh the question's. `asked` returns the question sentence(s) alone
when the prompt also holds other sentences, so that whisper can search with them too. `asks` is the one rule for
whether a prompt asks something at all (a question or a request to be told something), which the follow-up route,
the kinds of answer (whisper.kinds) and the focus stage read (session 16). Pure: strings in and out.
"""

from __future__ import annotations

import re

from whisper.imperative import is_request

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


# ---- whether a prompt asks at all (one rule for the follow-up route, the kinds of answer and the focus checks)

_WH_OPENER = re.compile(r"^\s*(?:(?:and|so|ok(?:ay)?|also|then|what about)[,]?\s+)*"
                        r"(?:when|what|whats|which|who|whom|whose|where|why|how)\b", re.IGNORECASE)
# A request for something to be told or handed to the user: a verb in its base form with the user as its object
# ("tell me the dentist's name", "remind us of the wifi password", "show me the runbook", "could you send me the
# IBAN"); "let me …" is the user announcing what they will do ("let me check"), save "let me know".
_TO_ME = re.compile(r"^\s*(?:(?:and|so|ok(?:ay)?|also|then|now|just)[,]?\s+)*(?:please\s+)?"
                    r"(?:(?:can|could|would|will) you\s+(?:please\s+)?)?(?:just\s+)?"
                    r"(?!let\s+(?:me|us)\s+(?!know\b))(?P<verb>[a-z]+)\s+(?:me|us)\b", re.IGNORECASE)


def asks(prompt: str) -> bool:
    """Whether the prompt asks something of the agent: it holds a "?", opens (after "and", "so", "ok", …) with a
    question word ("and who's my dentist again, need the name"), or is a request to tell or hand the user something
    (`is_request` with the user as the verb's object: "tell me the dentist name", "remind me the wifi password").
    Not a remark ("ok dr jansen, calling them now"), nor a yes/no question by word order alone ("and the data, is it
    backed up anywhere")."""
    if "?" in prompt or _WH_OPENER.match(prompt):
        return True
    to_me = _TO_ME.match(prompt)
    return to_me is not None and is_request(prompt[to_me.start("verb"):])
