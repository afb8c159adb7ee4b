"""What a prompt sets aside: "apart from the export, what was the most requested feature?" and "who may change the
server's own config, not the flags, the instance" ask about something else than the export or the flags, so a memory
whose title is about the thing set aside does not answer them (session 19; docs/whisper.md, "The focus rule beyond
the identity route"). Read from a closed class of words of exclusion, no store's words; pure: strings in, answers out.
"""

from __future__ import annotations

import re

from whisper.asked import sentences
from whisper.kinds import CLAUSE
from whisper.text import topic_tokens

# "apart from / aside from / besides / other than / except (for) / excluding X", or "not X" set off by a comma, a
# semicolon, a colon, a dash or a parenthesis (", not the flags,"), X being one to three words up to the next sign of
# punctuation or the prompt's end; not a "not" inside a clause ("when I'm not baking", "the file is not found"), nor
# one before a degree word or a clause, which set no thing aside (", not too heavy", ", not that it matters"; review2).
_SET_ASIDE = re.compile(
    r"(?:\b(?:apart from|aside from|besides|other than|except(?: for)?|excluding)|(?:^|[,;:(\u2013\u2014]|\s-)\s*not(?!\s+(?:too|so|very|quite|really|overly|particularly|that\s+(?:it|i|we|you|they|he|she|anyone|there))\b))"
    r"\s+(?:(?:the|a|an|our|my|your|its|their|his|her|this|that|these|those)\s+)?"
    r"(?P<thing>[\w.'\u2019-]+(?:\s+[\w.'\u2019-]+){0,2})\s*(?=[,;:.?!)\u2013\u2014]|\s-|$)",
    re.IGNORECASE)


# A sentence asking for a thing: a question word (not "why", nor "how" asking a method) opening a clause, so that
# "everything passes except the tests, why?" sets the tests aside from nothing: they are what it is about.
_ASKS_FOR_A_THING = re.compile(rf"{CLAUSE}(?:what|whats|which|who|whom|whose|where|when)\b", re.IGNORECASE)


def set_aside(prompt: str) -> list[set[str]]:
    """The things a sentence asking for a thing sets aside, each as its folded topic words ("apart from the export,
    what …" -> [{"export"}]; "who may change the config, not the flags, the instance" -> [{"flag"}]); empty when
    none is set aside."""
    return [words for sentence in sentences(prompt) if _ASKS_FOR_A_THING.search(sentence)
            for m in _SET_ASIDE.finditer(sentence) if (words := topic_tokens(m.group("thing")))]


def about_set_aside(prompt: str, title: str) -> str | None:
    """The thing the prompt sets aside that the memory's title names, every word of it ("Loafbook export feature"
    for "apart from the export"), or None. Only the title is read: a note that merely mentions the thing set aside
    in its text may still be about what is asked."""
    held = topic_tokens(title)
    return next((" ".join(sorted(words)) for words in set_aside(prompt) if words <= held), None)
