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
from collections.abc import Callable

from whisper.imperative import FINITE, inflected, is_request

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


# ---- whether a first-person prompt needs anything at all (session 23: a remark about oneself gets no standout)

# A sentence or clause is a part of the prompt between sentence ends, line breaks, commas, semicolons and colons
# ("a courier form asks for my home address, fill it in" holds the request "fill it in").
_CLAUSE_END = re.compile(r"(?<=[.!?])\s+|\s*[\n,;:]\s*")
# A yes/no question by word order: an auxiliary, then its subject ("is it ok for me to eat fish", "does gunicorn do
# http/2 itself", "should I bring the charger"), after "and", "so", "ok", …; not an auxiliary then "to", "been",
# "got", "just", "not" or "no", which starts a statement with its subject left out ("had to walk the dog").
_AUX_FIRST = re.compile(
    r"^\s*(?:(?:and|so|ok(?:ay)?|also|then|but|hey)\s+)*(?:is|are|was|were|am|do|does|did|have|has|had|can|could|"
    r"would|will|shall|should|may|might|must|isn't|aren't|wasn't|don't|doesn't|didn't|haven't|hasn't|can't|"
    r"couldn't|won't|wouldn't|shouldn't)\s+(?!(?:to|been|got|gotten|just|not|no)\b)[\w']", re.IGNORECASE)
# An indirect question inside the prompt: a question word or "whether" after its first word ("a form asks for my
# neighbourhood and how long I've lived there", "the airline wants to know which seat I'd like"). "when" is left
# out: mostly a clause of time in a remark ("I'm wrecked when I get home").
_INDIRECT = re.compile(r"\S\s+(?:what|which|where|who|whom|whose|why|how|whether)\b", re.IGNORECASE)


def clauses(text: str) -> list[str]:
    """The text's sentences, lines and comma, semicolon and colon clauses, in order, without blank ones."""
    return [c.strip() for c in _CLAUSE_END.split(text.strip()) if c.strip()]


def asks_anything(prompt: str, *, task: Callable[[str], bool]) -> bool:
    """Whether the prompt asks anything of the agent, read from what whisper already parses: `asks` (a "?", a
    question word first, a request to be told something) or `task` (a request or an announced task; the caller's
    rule, whisper.conventions.governs_task) on the prompt or any of its sentences and clauses (a clause of one word,
    "sadly", "ugh", is read as no task), a question by word order (an auxiliary then its subject), or an indirect
    question (a question word or "whether" inside it). A remark about oneself that asks none of these ("I'm so
    tired today", "my cat threw up on the rug again") is False. No list of words read off prompts: the words here are English's question words and auxiliaries."""
    if _INDIRECT.search(prompt):
        return True
    parts = clauses(prompt)
    return (asks(prompt) or task(prompt) or any(asks(part) or _AUX_FIRST.match(part) for part in parts)
            or any(task(part) for part in parts if len(part.split()) >= 2))


# A remark about oneself opens with the user as its subject: "I" in any form ("I'm so tired today", "I was up till
# three"), after a word set off by a comma ("ugh, I …"), or "my …" with a verb of its clause in view (a finite
# auxiliary or an inflected word: "my knee is acting up again", "my sister visited"). A noun phrase ("my dentist's
# phone number") has no verb and is a lookup, not a remark; a statement about someone else that concerns the user
# ("the doctor wants to prescribe amoxicillin for my sinus infection") asks for advice in all but form.
_I_FIRST = re.compile(r"^\s*(?:[a-z]+,\s+)?i(?:['\u2019](?:m|ve|d|ll))?(?=\s)", re.IGNORECASE)
_MY_FIRST = re.compile(r"^\s*(?:[a-z]+,\s+)?my\s+(?P<rest>.*)", re.IGNORECASE)


def _verb_in(words: list[str]) -> bool:
    return any(w in FINITE or (inflected(w) and not w.endswith(("'s", "\u2019s"))) for w in words)


def remark_about_oneself(prompt: str, *, task: Callable[[str], bool]) -> bool:
    """True for a prompt in which the user says something about themself and asks nothing (`asks_anything` False):
    a mood, a plan, a reaction, a fact ("I'm so tired today", "my knee is acting up again"). Whisper gives such a
    remark no standout (whisper.conventions.first_person_need)."""
    if asks_anything(prompt, task=task):
        return False
    first = (sentences(prompt) or [""])[0]
    if _I_FIRST.match(first):
        return True
    mine = _MY_FIRST.match(first)
    return mine is not None and _verb_in([w.lower().replace("\u2019", "'") for w in mine.group("rest").split()])
