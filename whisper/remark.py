"""Whether a prompt is a person's remark that asks nothing (docs/whisper.md, stage 1 `early_exit`): a short line that
opens with an interjection of assent, thanks or greeting ("ok", "right", "yep", "lol", "morning") or closes with thanks
("… thx", "… cheers"), holds no question (whisper.asked.asks) and no request in any of its clauses
(whisper.imperative.is_request): "ok that fixed it, thx", "yep, merged", "brb, taking the dog out", "right, Tuesday
and Thursday then. thx". Not "ok new week. plan my runs" (a request), "ok and how do I cut the release" (a question),
nor one going on from the last prompt ("ok, and the staging one"), nor a line of twelve words or more (a report such as "ok I did something stupid …" asks implicitly).
Read by shape, not by the remark's words; pure: strings in, answers out."""

from __future__ import annotations

import re

from whisper.asked import asks
from whisper.imperative import is_request

REMARK_MAX_WORDS = 11
_INTERJECTION = (
    r"(?:ok(?:ay)?|k|kk|alright|right|yes|yeah|yep|yup|sure|no|nope|nah|ah|aha|oh|ahh|lol|haha|hah|nice|cool|great|"
    r"perfect|thanks|thank you|thx|ty|cheers|morning|good morning|hi|hey|hello|gm|brb|nvm|bye|welp|phew)"
    r"(?=[\s,.!;:]|$)")
# The interjection may follow one word set off by a comma, the answer just given said back: "overvecht, right. calling
# them now", "may, ok. I'll book it then" (session 19).
_OPENER = re.compile(r"^\s*(?:[A-Za-z][\w'\u2019-]*,\s+(?=" + _INTERJECTION + r"))?(?:" + _INTERJECTION
                     + r"[\s,.!;:]*)+", re.IGNORECASE)
_THANKS_LAST = re.compile(r"\b(?:thanks|thank you|thx|ty|cheers)\W*$", re.IGNORECASE)
_GOES_ON = re.compile(r"^(?:and|or|also|plus|what about|how about|same)\b", re.IGNORECASE)  # "ok, and the tests": a follow-up
# An exclamation in a question's words: "oh what a mess", "ah how nice"; not "oh how come", "ok how long".
_EXCLAIMS = re.compile(r"^(?:what\s+an?\s+\w+|how\s+(?!(?:come|so|long|much|many|often|far|old|big|soon)\b)\w+)\W*$",
                       re.IGNORECASE)
# After a greeting, one word and "first" is the person's own plan for the day, not a task: "morning! coffee first",
# "gm, shower first then the standup" (a noun read as a verb by is_request; session 19, review2). "ok, rebase first",
# with no greeting, stays a request, and so does any clause with more words ("morning! fix the build first").
_GREETING = re.compile(r"^\s*(?:good\s+)?(?:morning|evening|afternoon|gm|hi|hey|hello)(?=[\s,.!;:]|$)", re.IGNORECASE)
_OWN_PLAN = re.compile(r"^[A-Za-z][\w'\u2019-]*\s+first$", re.IGNORECASE)
_CLAUSE = re.compile(r"[,.;!]+(?:\s+|$)|\s+(?:then|and|but)\s+", re.IGNORECASE)


def is_remark(prompt: str) -> bool:
    """True when the prompt is one short line opening with an interjection or closing with thanks, asking nothing and
    requesting nothing in any clause."""
    text = prompt.strip()
    if not text or "\n" in text or len(text.split()) > REMARK_MAX_WORDS:
        return False
    if not (_OPENER.match(text) or _THANKS_LAST.search(text)) or asks(text):
        return False
    rest = _OPENER.sub("", text)
    if asks(rest) and not _EXCLAIMS.match(rest):  # "oh, what's the port again": a question after the interjection
        return False
    if _GOES_ON.match(rest):
        return False
    # the clauses after the opener ("march, ok. I'll book it": the word said back is no request to "march")
    clauses = [_OPENER.sub("", c).strip() for c in _CLAUSE.split(rest) if c and c.strip()]
    greeted = bool(_GREETING.match(text))
    # a clause of interjections alone ("thx") requests nothing
    return not any(is_request(c) and not (greeted and _OWN_PLAN.match(c)) for c in clauses if c)
