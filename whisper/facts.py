"""Kinds of personal fact (whisper.lexicon): a question's general word or phrase asks for one ("what's my job?",
"where do I work?"), a note holds one as the user's or as someone else's ("Works at Kestrel Freight", "My parents
live in Aveiro"). Read by the focus and ownership rules of whisper.stages.retrieve and the overlap filter of
whisper.stages.scoring (docs/whisper.md, "Words for personal facts").

No Django, no I/O: strings in, answers out. Imports run one way: this module reads whisper.text, never the reverse.
"""

from __future__ import annotations

import re
from functools import lru_cache

from whisper.lexicon import FACTS, OTHER_PEOPLE
from whisper.text import (
    NOT_POSSESSIVE, OTHER_OWNERS, RELATION_REACH, STOP_WORDS, USER_SUBJECTS, WORD, fold, phrased, question_focus,
    topic_tokens,
)


def _facts_by_word(*, kinds: bool) -> dict[str, frozenset[str]]:
    """Folded word -> the facts it names: general words only, or general and specific ones."""
    out: dict[str, set[str]] = {}
    for fact in FACTS:
        for word in (*fact.asked, *(fact.kinds if kinds else ())):
            out.setdefault(fold(word), set()).add(fact.name)
    return {w: frozenset(names) for w, names in out.items()}


_ASKED = _facts_by_word(kinds=False)  # what a question's general word asks for
_HELD = _facts_by_word(kinds=True)  # what a note naming the word holds
_KINDS = frozenset(fold(w) for f in FACTS for w in f.kinds)
_RELATIONS = frozenset(f.name for f in FACTS if f.relation)
_SAID = tuple((f.name, re.compile(r"\b(?:" + f.said + r")\b", re.IGNORECASE)) for f in FACTS if f.said)
_ASKED_PHRASES = tuple((f.name, re.compile(r"\b(?:" + f.asked_phrases + r")", re.IGNORECASE))
                       for f in FACTS if f.asked_phrases)
# Sentences end at . ! ? ; and line breaks, not at a colon ("Mobile: +32 …" is one sentence; whisper.stages.focus
# also ends one at a colon, for a title line before its text).
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def asked_facts(tokens: set[str]) -> set[str]:
    """The kinds of personal fact folded question words ask for by a general word ({"job"} -> {"job"}, {"pet"} ->
    {"pets"}); none when one of them names a specific one ("cat", "vegan", "asthma"), which only that word meets."""
    if tokens & _KINDS:
        return set()
    return {name for t in tokens for name in _ASKED.get(t, ())}


def _asked_by(question: str, tokens: set[str]) -> set[str]:
    """The facts a question asks for: by a general word of `tokens` (asked_facts), or by a phrase with no general word
    ("where do I work?"); none when a word of `tokens` names a specific one."""
    if tokens & _KINDS:
        return set()
    return asked_facts(tokens) | {name for name, phrase in _ASKED_PHRASES if phrase.search(question)}


def question_facts(question: str) -> set[str]:
    """asked_facts of a question's words, plus the phrases that ask for a fact without a general word ("where do I
    work?", "what do I do in my spare time?")."""
    return _asked_by(question, topic_tokens(question))


_SUBJECT_VERBS = frozenset("is was has had works worked lives lived moved turned speaks drives plays studied grew "
                           "and".split())


def _not_mine(before: list[str], fact: str) -> bool:
    """A fact said after these words of its sentence is someone else's when, read back from the fact, another owner
    ("his", "Jonas's") or another person ("my sister works as …"; for a relation such as a pet, within
    RELATION_REACH words: "my sister has a dog") comes before "I" or "we" ("My wife and I live …", "After my dad
    retired, I moved …": the user's), or, with no "I" or "we" before it, for a fact of the user's own, a name opens
    the sentence as its subject ("Jonas was born on …", "Jonas works at …")."""
    relation = fact in _RELATIONS
    for i in range(len(before) - 1, -1, -1):
        low = before[i].lower().replace("\u2019", "'")
        if low in USER_SUBJECTS:
            return False
        if low in OTHER_OWNERS or (low.endswith("'s") and low not in NOT_POSSESSIVE):
            return True
        if low in OTHER_PEOPLE and (not relation or i >= len(before) - RELATION_REACH):
            return True  # "my sister has a dog"; but "my partner and I have a dog" is the user's dog
    if relation or not before:
        return False
    first = before[0]
    low = first.lower()
    return (first[:1].isupper() and low not in STOP_WORDS and not low.startswith("i'")
            and (len(before) == 1 or before[1].lower() in _SUBJECT_VERBS))


@lru_cache(maxsize=4096)
def named_facts(text: str, labels: tuple[str, ...] = ()) -> frozenset[str]:
    """The kinds of personal fact a note holds as the user's: by a word of the lexicon ("Our dog …" -> pets) or a
    phrase such notes use ("Works at Kestrel Freight" -> job), not when said of someone else in the same sentence
    (sentences split at . ! ? ; and line breaks). Its labels (title, tags) say whose nothing: a fact they name
    counts unless the text names it only as someone else's (a note titled "Volvo" that says "my brother drives a
    white Volvo")."""
    mine, theirs = _facts_in(text)
    unowned = set().union(*(_facts_in(label)[0] for label in labels)) if labels else set()
    return frozenset(mine | (unowned - theirs))


def others_facts(text: str, labels: tuple[str, ...] = ()) -> frozenset[str]:
    """The kinds of personal fact a note (its text, title and tags) names only as someone else's: "My parents live in
    a cottage near Aveiro" -> {"home"}; nothing when it also names the fact as the user's."""
    theirs = set().union(*(_facts_in(t)[1] for t in (text, *labels)))
    return frozenset(theirs - named_facts(text, labels))


# A relative clause set off by commas ("My parents, whom we visit every summer, live in …"): its subject ("we") is
# not the subject of the sentence around it.
_RELATIVE = re.compile(r",\s*((?:who|whom|whose|which|where)\b[^,;.!?]*)(?:,|(?=[;.!?]|$))", re.IGNORECASE)


def _clauses(sentence: str) -> list[str]:
    """A sentence as the clauses whose subjects read apart: the sentence without its comma-set relative clauses
    ("My parents live in Aveiro"), and each relative clause after the words it hangs on ("My parents whom we visit
    every summer"; "My sister who lives in Ghent")."""
    found = list(_RELATIVE.finditer(sentence))
    if not found:
        return [sentence]
    main = _RELATIVE.sub(" ", sentence)
    return [main, *(f"{sentence[: m.start()]} {m.group(1)}" for m in found)]


def _facts_in(text: str) -> tuple[set[str], set[str]]:
    """The facts a text names as the user's, and those it names only as someone else's."""
    mine: set[str] = set()
    theirs: set[str] = set()
    for sentence in (c for s in _SENTENCE.split(phrased(text)) for c in _clauses(s)):
        words = WORD.findall(sentence)
        found = [(name, words[:i]) for i, word in enumerate(words)
                 for name in _HELD.get(fold(re.sub(r"['\u2019]s$", "", word)), ())]
        found += [(name, WORD.findall(sentence[: m.start()])) for name, said in _SAID for m in said.finditer(sentence)]
        for name, before in found:
            (theirs if _not_mine(before, name) else mine).add(name)
    return mine, theirs - mine


def names_focus(question: str, text: str, labels: tuple[str, ...] = ()) -> bool:
    """True when a note names what a question about the user asks about: one of its focus words (in its text or
    labels: title, tags), or the kind of fact a general focus word or phrase asks for ("what's my job?" and "Works at
    Kestrel Freight"; "what's my cat's name?" needs "cat")."""
    focus = question_focus(question)
    if focus & topic_tokens(" ".join((text, *labels))):
        return True
    return bool(_asked_by(question, focus) & named_facts(text, labels))
