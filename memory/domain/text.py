"""Words of a query: tokens, stop words, first-person and question detection, history intent (pure)."""

from __future__ import annotations

import re

STOP_WORDS = frozenset("""
a an the is are was were be been being have has had do does did will would could should may might shall can need
dare ought user i me my we our you your he she it they them this that these those am not no nor so if or and but for
of to in on at by with from as into about what which who whom when where why how all any each every both few more
most other some such than too very just because also
""".split())

# First-person words: a query with one of them is about the user, so the FTS leg adds the `about_self` tag token.
# The original also counted we/our/you/your; "we" is usually the team and "you" the agent, so they are left out.
IDENTITY_TOKENS = frozenset({"i", "me", "my", "mine", "myself", "user"})
ABOUT_SELF_TOKEN = "about_self"
# A first-person *procedural* question asks how to do something, not about the user: the "I" of "how do I ship a
# release?" does not count ("how do I like to work?" still does, and so does any "my"). "How should I ..." and
# "can I ..." are left first person: they often ask for the user's own rule ("how should I write commit messages",
# "can I schedule a call at 8pm").
_PROCEDURAL_I = re.compile(r"\bhow\s+(?:do|can|could)\s+i\b(?!\s+(?:like|prefer|usually|feel|take)\b)",
                           re.IGNORECASE)

# Words that carry no topic in a temporal query ("what did we do yesterday", "show me what happened this week").
TEMPORAL_FILLER = frozenset("""
after again above below between during further get give here me once only out over own same show tell then through
under until up us while work worked working happen happened happening recap summary summarise summarize anything
everything stuff things thing remember recall new going on
""".split())

_WORD = re.compile(r"\w+")
_PUNCTUATION = re.compile(r"[^\w\s]")
_QUESTION = re.compile(
    r"^\s*(where|what|who|whom|when|why|how|which|is|are|was|were|do|does|did|can|could|should|would|will)\b",
    re.IGNORECASE,
)
_HISTORY = re.compile(
    r"\b(used\s+to|previously|previous|history|historical|formerly|former|in\s+the\s+past|earlier|before|"
    r"no\s+longer|anymore|any\s+more|old)\b",
    re.IGNORECASE,
)
_NOT_HISTORY = re.compile(r"\bhow\s+old\b|\b\d+[\s-]*(year|month|week|day)s?[\s-]*old\b|\byears?\s+old\b",
                          re.IGNORECASE)


def words(text: str) -> list[str]:
    """Lowercase word tokens (letters, digits, underscore), in order, with repeats."""
    return _WORD.findall(text.lower())


def title_words(text: str) -> set[str]:
    """Lowercase words with punctuation deleted, not split on ("invoice-v2-layout" is one word, as in the original)."""
    return set(_PUNCTUATION.sub("", text.lower()).split())


def content_words(text: str) -> list[str]:
    """Word tokens that are neither stop words nor single characters, in order, without repeats."""
    return list(dict.fromkeys(w for w in words(text) if len(w) > 1 and w not in STOP_WORDS))


def is_first_person(text: str) -> bool:
    """True when the query speaks about the user (I, me, my, ...); the "I" of a procedural question ("how do I
    deploy?") does not count."""
    return any(w in IDENTITY_TOKENS for w in words(_PROCEDURAL_I.sub(" ", text)))


def is_question(text: str) -> bool:
    """True when the query opens with a question word (what, how, is, did, ...)."""
    return _QUESTION.match(text) is not None


def asks_for_history(text: str) -> bool:
    """True when the query asks about the past state of things ("used to", "previously", "my old editor")."""
    return _HISTORY.search(_NOT_HISTORY.sub(" ", text)) is not None


def is_topicless(text: str) -> bool:
    """True when nothing but stop words and temporal filler is left (a pure temporal query)."""
    return not [w for w in words(text) if w not in STOP_WORDS and w not in TEMPORAL_FILLER]
