"""The question's focus beyond the identity route: a memory about the thing asked of, holding nothing of what is
asked about it, is not whispered (issue 11, item 9; docs/whisper.md, "The focus rule beyond the identity route").

The checks, each a text rule on the prompt and the memory (title, text, labels; its creation date for a year); no
store's words in them:

* **a possessive chain**: "when is Jonas's mother's birthday?" asks about the mother, not about Jonas: a memory that
  does not name every owner after the first ("mother") is about another thing than the one asked of.
* **the kind of answer** (whisper.kinds, the one table of kinds): "how much did the trip cost?" asks for an amount
  of money; a memory holding no amount (a currency sign or word beside a number) cannot answer it however much it
  says about the trip. The same for a time, a number, a person or a place: "when is Pixel's vet appointment?" and a
  vet note holding no date.

* **the thing counted** (session 15, whisper.kinds): "how many crash mats are there?" is not answered by a note whose
  only counts count other things ("the two highest top-outs").
* **another version** (session 14): "when is 1.1 planned?" is not answered by the event note of 1.0.0's release.
* **another year** (session 15, whisper.when): "what was the contribution back in 2023?" is not answered by a note on
  the contribution from July 2026 on, nor "what did the grant give us in 2024?" by the event note of 2025's grant;
  since session 16 nor "who audited the 2024 accounts?" by a fact on "the 2026 accounts" (a year that labels).
* **the dimension of a measure** (session 16, whisper.kinds): "how many km did I run?" is not answered by a note
  holding no distance (a race's date and finishing time).
* **a goal for the past** (session 16): "which level did I pass last time?" is not answered by the goal to pass one.
* **the last occurrence** (session 16): "which notary did we use last time the bylaws changed?" is not answered by the
  standing rule on how they are changed (no event, no date).
* **a past date asked** (session 19): "when was my last appointment with ruud?" is not answered by a note on the
  physiotherapist holding no date (`no_date_for_the_past`; an event or a decision may be dated by its creation).
* **the thing set aside** (session 19, whisper.excluded): "apart from the export, what was the most requested
  feature?" is not answered by the note titled on the export.
* **the thing asked, held by another** (session 19, `thing_held_by_another`, pool-wide): "what was picked for book
  club" drops a memory naming no "pick" when another memory left names it.

A third check, another name for the thing ("a Dutch passport" and "my Belgian passport"), was removed in session 13:
no dev prompt written after it changed (docs/whisper.md, "Rules audited on fresh batches").

The stage runs after the gate, so the memories it drops still set the best hit the gate measured the others against.
"""

from __future__ import annotations

import re
from datetime import datetime

from memory.domain.enums import NodeType
from whisper import kinds
from whisper.asked import asks
from whisper.conf import WhisperConf
from whisper.evidence import thing_evidence
from whisper.excluded import about_set_aside
from whisper.imperative import is_request
from whisper.pasted import typed_text
from whisper.kinds import (
    VERSION_ASKED, asked_dimension, asked_kinds, counted_thing, holds_count_of, holds_measure, missing_kind,
    scan_chars,
)
from whisper.state import SILENT_OFF_FOCUS, STAGE_OFF_FOCUS, Candidate, Deps, WhisperRun
from whisper.text import NOT_POSSESSIVE, fold, topic_tokens
from whisper.when import asked_points, may_name_a_year, other_time

# ---- a possessive chain: "Jonas's mother's birthday" -> the owners after the first ({"mother"})

_TOKEN = re.compile(r"[A-Za-z][\w'\u2019-]*")
_POSSESSIVE_WORD = re.compile(r"[A-Za-z][\w-]*(?:'s|\u2019s|s'|s\u2019)")
# The same relation in other words, so that "mum's" meets a note saying "mother".
_KIN = {"mum": "mother", "mom": "mother", "mam": "mother", "mummy": "mother", "mommy": "mother", "dad": "father",
        "daddy": "father", "pa": "father", "ma": "mother", "grandma": "grandmother", "granny": "grandmother",
        "nan": "grandmother", "nana": "grandmother", "grandpa": "grandfather", "granddad": "grandfather",
        "grandad": "grandfather", "bro": "brother", "sis": "sister"}


def _kin(word: str) -> str:
    return fold(_KIN.get(word.lower(), word))


def chain_owners(prompt: str) -> set[str]:
    """The folded owners after the first in each possessive chain of the prompt ("what's Jonas's mother's name?" ->
    {"mother"}); empty without a chain of two or more ("when is Jonas's birthday?")."""
    owners: set[str] = set()
    chain: list[str] = []
    for word in [*_TOKEN.findall(prompt), ""]:
        if _POSSESSIVE_WORD.fullmatch(word) and word.lower().replace("\u2019", "'") not in NOT_POSSESSIVE:
            chain.append(re.sub(r"(?:'s|\u2019s|'|\u2019)$", "", word))
            continue
        for owner in chain[1:]:
            owners |= {_kin(t) for t in topic_tokens(owner)}
        chain = []
    return owners


def _words(text: str) -> set[str]:
    return {_kin(t) for t in re.findall(r"[A-Za-z][\w-]*", text)} | topic_tokens(text)


# ---- a version the prompt names: "when is gpxkit 1.1 planned?" is not about a note on 1.0.0

# A dotted number ("1.1", "v2.3.0", "3.12"), not a decimal with a unit ("2.5 kg", "0.5 ms") nor a part of a longer
# token (an address "10.0.0.1" is read whole).
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3})(?![\w.]*\d)(?!\s?(?:%|(?:kg|g|km|m|cm|mm|mb|gb|kb|tb|ms|s|"
                      r"sec|min|h|hrs?|px|l|ml|x|k)\b))", re.IGNORECASE)
# A yes/no question ("is routewise on 3.11?") is answered by a note naming another version: the check leaves it.
_YES_NO = re.compile(r"(?:^|[.!?]\s+)(?:is|are|was|were|does|do|did|can|could|will|would|should|has|have|isn't|"
                     r"aren't|doesn't|don't)\b(?:[^.!?]|\.\d)*\?", re.IGNORECASE)

# A yes/no question of one or two words after a comma, colon or dash ("split_by_pause is missing in 0.9.2, bug?",
# "… on 3.11, right?"), no question word: the version is in what is reported, and a note on another version may say
# why (session 19).
_TAG_QUESTION = re.compile(r"(?:[,:;\u2013\u2014]|\s-)\s*(?!(?:what|whats|which|who|whom|whose|where|when|why|how)\b)"
                           r"[A-Za-z][\w'\u2019-]*(?:\s+[A-Za-z][\w'\u2019-]*)?\s*\?", re.IGNORECASE)
# Not a tag after a question of its own: "when is 1.1 planned, roughly?" asks about 1.1 (review2, session 19).
_WH_OPENS = re.compile(rf"{kinds.CLAUSE}(?:what|whats|which|who|whom|whose|where|when|why|how)\b", re.IGNORECASE)


def _tag_question(prompt: str) -> bool:
    """Whether the prompt reports something and asks one or two words of yes/no after it ("… in 0.9.2, bug?")."""
    return any(not _WH_OPENS.search(prompt[:m.start()]) for m in _TAG_QUESTION.finditer(prompt))


def _version_key(v: str) -> tuple[int, ...]:
    parts = [int(x) for x in v.split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def versions(text: str) -> set[str]:
    """The version numbers a text names ("gpxkit 1.0.0 was released" -> {"1.0.0"})."""
    return {m.group(1) for m in _VERSION.finditer(text)}


_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)")


def asking_sentences(prompt: str) -> list[str]:
    """The sentences of a prompt that ask: a question ("when is 1.1 planned?") or a request ("cut 1.0.1 and do the
    release"); not one that only tells ("bumping us to python 3.13 this sprint. what blocked us last time?" asks
    about the last time, not about 3.13). A question is read by `whisper.asked.asks`, a request by `is_request`
    (any task, not only one asking to be told something)."""
    return [sentence for sentence in _SENTENCE.split(prompt.strip()) if asks(sentence) or is_request(sentence)]


def _asking_versions(prompt: str) -> set[str]:
    """The versions named in a sentence that asks (`asking_sentences`)."""
    return {v for sentence in asking_sentences(prompt) for v in versions(sentence)}


def other_version(prompt: str, text: str, node_type: str = NodeType.EVENT) -> str | None:
    """The version an asking sentence of the prompt names when the memory is an event (one occurrence: a release,
    an upgrade) naming versions and none of them is that one ("when is 1.1 planned?" and "1.0.0 was released on 14
    September" -> "1.1"; "cut 1.0.1" and the note of 1.0.0's release -> "1.0.1"); None when no asking sentence names
    a version, the memory is a standing rule or procedure (versions there are examples: "3.9 was dropped in 0.9"),
    names no version ("tag vX.Y.Z"), names the prompt's ("3.12" meets "3.12.1", "1.1" meets "1.1.0"), or the prompt is
    a yes/no question ("is routewise on 3.11?" is answered by a note on 3.12)."""
    if node_type != NodeType.EVENT or _YES_NO.search(prompt) or _tag_question(prompt):
        return None
    asked = _asking_versions(prompt)
    held = versions(text)
    if not asked or not held:
        return None
    for v in asked:
        key = _version_key(v)
        if any(_version_key(h) == key or h.startswith(v + ".") for h in held):
            return None
    return sorted(asked)[0]


# ---- the version asked (session 18): "which version of lxml do we pin?" is not answered by a note holding none

# A question for a version: "which / what" and up to three words before "version(s)" ("which python version is it on",
# "what's the minimum lxml version", "which version do I pin"); not "what changed in the new version" (four words).
_ASKS_VERSION = re.compile(r"\b(?:what|which)(?:'s|\u2019s| is| was| are| were)? (?:the |our |its |their |your |my )?"
                           rf"(?:[\w'\u2019-]+ ){{0,3}}?{VERSION_ASKED}", re.IGNORECASE)
# A major version alone, as a tag or a package pin writes it: "v3", "@18", "==2".
_MAJOR = re.compile(r"(?:(?<![\w.])v|@|==|>=|~=|\^|~)\d+\b", re.IGNORECASE)


# A major version after a name: "Node 20", "Postgres 16", "version 2" (the name is checked against the question's).
_NAMED_MAJOR = re.compile(r"\b([A-Za-z][\w+-]*)\s+v?\d{1,3}\b(?![.,]?\d)")


def holds_version(text: str, prompt: str = "") -> bool:
    """Whether a memory's text names a version: a dotted number (`versions`: "3.11", "1.62", "v2.3.0"), a major
    version as a tag or pin writes it ("v3", "react@18", "django==5"), or a number right after "version" or a name the
    question holds ("which node version …" and "builds on Node 20")."""
    if versions(text) or _MAJOR.search(text):
        return True
    named = topic_tokens(prompt) | topic_tokens("version")
    return any(topic_tokens(m.group(1)) & named for m in _NAMED_MAJOR.finditer(text))


def no_version(prompt: str, text: str) -> bool:
    """Whether an asking sentence asks for a version ("which version of X do we pin?") and the memory names none
    (`holds_version`): a note on the package that holds no version cannot say which one. The whole text is read, as
    `other_version` reads it."""
    return (any(_ASKS_VERSION.search(sentence) for sentence in asking_sentences(prompt))
            and not holds_version(text, prompt))


# ---- a year the prompt names: "what was the contribution back in 2023?" is not about a note on 2026 on

def other_year(prompt: str, text: str, created: datetime | None, node_type: str = NodeType.FACT) -> str | None:
    """A year (or month and year) an asking sentence of the prompt names that the memory's dates contradict
    (`whisper.when.other_time`: an event is about the years it names and was created in, any other memory only
    by the bounds and ranges it states, one stating none is never contradicted); None when no asking sentence names one ("since 2023",
    "last year" name none)."""
    if not may_name_a_year(prompt):
        return None
    asked = tuple(p for sentence in asking_sentences(prompt) for p in asked_points(sentence))
    return other_time(asked, text, created, event=node_type == NodeType.EVENT)


# ---- a goal for a question about the past: "which level did I pass last time?" is not met by "Goal: pass N4 in 2027"

# A sentence asking what happened: "did", a word, a verb ("did I pass", "did we spend"), or "last time"; not "did"
# before a verb of intending, whose answer a goal is ("what did I want to reach this year?").
_PAST = re.compile(r"\bdid [\w'-]+ (?!(?:want|wish|plan|hope|mean|intend|aim|decide|"
                   r"promise|say|set|choose|pick)\b)\w+|\blast time\b", re.IGNORECASE)


# A sentence that names the goal asks about it ("did I reach my goal?", "did we hit the target for 2026?"): the goal
# memory is what it is about, met or not.
_NAMES_A_GOAL = re.compile(r"\b(?:goals?|targets?|aims?|objectives?|resolutions?)\b", re.IGNORECASE)


def goal_for_the_past(prompt: str, node_type: str) -> bool:
    """Whether the memory is a goal (a thing not yet done) and an asking sentence of the prompt asks what happened
    ("which jlpt level did I pass last time", "how many km did I run in october"), not about the goal itself ("did
    I reach my goal", `_NAMES_A_GOAL`)."""
    return node_type == NodeType.GOAL and any(_PAST.search(sentence) and not _NAMES_A_GOAL.search(sentence)
                                              for sentence in asking_sentences(prompt))


# ---- the last occurrence asked: "which notary did we use last time the bylaws changed?" is not met by the rule

# "last time" only: "when did we last go and how did we get there" also asks how, which a standing note may answer.
_LAST_OCCURRENCE = re.compile(r"\blast time\b", re.IGNORECASE)
# A question for who, which one or when: an occurrence answers it (who did it, which one was used, when it was); "what
# went wrong last time" or "how did we do it last time" may be answered by a note on how it is done.
_WHO_WHICH_WHEN = re.compile(r"\b(?:who|whom|whose|which|when)\b", re.IGNORECASE)
# A memory that states a rule: a decision, a preference or a procedure, or a text saying what must or may be done (a
# modal or a verb of requiring: "changing the statuten needs a notarial deed", "releases must be tagged").
_RULE_TYPES = frozenset({NodeType.DECISION, NodeType.PREFERENCE, NodeType.PROCEDURE})
_STATES_A_RULE = re.compile(r"\b(?:must|mustn't|should|shouldn't|shall|needs?|needed|requires?|required|has to|"
                            r"have to|always|never|may only|can only|is only|are only)\b", re.IGNORECASE)


def rule_like(text: str, node_type: str) -> bool:
    """Whether a memory states a rule (`_RULE_TYPES`, or a fact or note whose text says what must be done)."""
    return node_type in _RULE_TYPES or (node_type != NodeType.EVENT and bool(_STATES_A_RULE.search(text)))


def rule_for_an_occurrence(prompt: str, text: str, node_type: str) -> bool:
    """Whether an asking sentence asks who, which or when about the last time something happened ("which notary
    … last time the statuten changed") and the memory is a rule that records no occurrence: rule-like (`rule_like`)
    and holding no date or time (a standing rule on how the thing is done, "changing the statuten needs a notarial
    deed", says nothing of the last time it was done). A fact or a person's note ("Notaris de Vries handled our
    statuten") may name who did it, and is left."""
    return (rule_like(text, node_type) and not kinds.holds_kind(text, "time")
            and any(_LAST_OCCURRENCE.search(sentence) and _WHO_WHICH_WHEN.search(sentence)
                    for sentence in asking_sentences(prompt)))


# ---- a past date asked (session 19): "when was my last appointment with ruud?" is not met by a note on ruud alone

# "when did / was / were / had" opening a clause: a question about when something happened. (The kinds' "time" leaves
# it out: an event's or decision's own date answers it, whisper.kinds.)
_WHEN_PAST = re.compile(rf"{kinds.CLAUSE}when (?:did|was|were|had)\b", re.IGNORECASE)
# The memories that record an occurrence, whose creation date may be the date asked.
_OCCURRENCES = frozenset({NodeType.EVENT, NodeType.DECISION})
# Another question in the same sentence ("when did we last go and how did we get there"): a note may answer that one.
_ANOTHER_QUESTION = re.compile(rf"{kinds.CLAUSE}(?:how|what|whats|which|who|whom|whose|where|why)\b", re.IGNORECASE)


def no_date_for_the_past(prompt: str, text: str, node_type: str, *, limit: int = kinds.SCAN_CHARS) -> bool:
    """Whether an asking sentence asks when something happened ("when was my last appointment with ruud?") and the
    memory records no occurrence (not an event or a decision) and its text holds no date or time: whisper renders no
    creation date, so a note on the physiotherapist alone cannot say when the last appointment was. A sentence that
    asks something else too ("… and how did we get there") is left: the note may answer that."""
    return (node_type not in _OCCURRENCES and not kinds.holds_kind(text, "time", limit=limit)
            and any(_WHEN_PAST.search(sentence) and not _ANOTHER_QUESTION.search(_WHEN_PAST.sub(" ", sentence))
                    for sentence in asking_sentences(prompt)))


# ---- the check and the stage

def off_focus(prompt: str, *, title: str, content: str, tags: tuple[str, ...] = (),
              node_type: str = NodeType.FACT, content_max_chars: int = 0,
              created: datetime | None = None) -> str | None:
    """Why a memory (its title, content and labels: tags, project) misses the question's focus ("chain: mother",
    "kind: amount", "count of: mats", "measure: distance", "goal: past asked", "occurrence: none recorded", "kind:
    past time", "set aside: export", "version: 1.1", "year: 2023"), or None when it does not. The prompt is read as
    typed (`whisper.pasted.typed_text`: harness elements and fenced pastes cut out). `node_type` tells an
    event (one occurrence, which another version's or year's note is not) from a standing rule (`other_version`,
    `other_year`); `created` is the memory's creation date (`other_year`); `content_max_chars` (the conf's) widens
    the kind and count checks' reading to what whisper renders (`whisper.kinds.scan_chars`)."""
    prompt = typed_text(prompt)
    text = f"{title}\n{content}\n{' '.join(tags)}"
    missing = chain_owners(prompt) - _words(text)
    if missing:
        return "chain: " + ", ".join(sorted(missing))
    kind = missing_kind(prompt, f"{title}\n{content}", limit=scan_chars(title, content_max_chars))
    if kind is not None:
        return "kind: " + kind
    thing = counted_thing(prompt)
    if (thing is not None and "count" in asked_kinds(prompt)
            and not holds_count_of(f"{title}\n{content}", thing, limit=scan_chars(title, content_max_chars))):
        return "count of: " + thing
    dimension = asked_dimension(prompt)
    if dimension is not None and not holds_measure(f"{title}\n{content}", dimension,
                                                   limit=scan_chars(title, content_max_chars)):
        return "measure: " + dimension
    if goal_for_the_past(prompt, node_type):
        return "goal: past asked"
    if rule_for_an_occurrence(prompt, f"{title}\n{content}", node_type):
        return "occurrence: none recorded"
    if no_date_for_the_past(prompt, f"{title}\n{content}", node_type, limit=scan_chars(title, content_max_chars)):
        return "kind: past time"
    aside = about_set_aside(prompt, title)
    if aside is not None:
        return "set aside: " + aside
    version = other_version(prompt, f"{title}\n{content}", node_type)
    if version is not None:
        return "version: " + version
    if no_version(prompt, f"{title}\n{content}"):
        return "version: none held"
    year = other_year(prompt, f"{title}\n{content}", created, node_type)
    return None if year is None else "year: " + year


def labels(cand: Candidate) -> tuple[str, ...]:
    """A memory's tags and project: a project's notes rarely name it ("Run the Playwright tests with …"); the
    focus check reads them with its text (bench/whisper_stores.py replays it)."""
    return (*(cand.hit.tags if cand.hit is not None else ()), *((cand.space,) if cand.space else ()))


# A question word opening a clause: more than one in a prompt asks more than one thing.
_QUESTION_OPENS = re.compile(rf"{kinds.CLAUSE}(?:how|what|whats|which|who|whom|whose|where|why|when)\b", re.IGNORECASE)


def thing_held_by_another(prompt: str, texts: list[tuple[str, str]]) -> list[bool]:
    """Per memory (title, content), whether it names none of the thing a "which / what X" question asks for while
    another memory of the same pool names all of it (`whisper.evidence.thing_evidence`: "what was picked for book
    club" and a note on keeping the club's books beside the book club note saying "next month's pick is …"). A
    memory naming none of the thing is kept when no other names it: the thing is often said in other words ("which
    town" and "Sintra"), so only the pool's own better answer tells it is beside the point. A prompt asking a second
    question ("… and where's the receipt?") drops nothing: a memory may answer that one."""
    if len(_QUESTION_OPENS.findall(prompt)) > 1:  # "which laptop did I buy and where's the receipt?": the receipts
        return [False] * len(texts)               # note answers the other question (review2, session 19)
    evidence = [thing_evidence(prompt, title=title, content=content) for title, content in texts]
    held = any(e > 0 for e in evidence)
    return [held and e < 0 for e in evidence]


def focus_check(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Drop the memories past the gate that miss the prompt's focus (`off_focus`), then those naming none of the
    thing asked when another names it (`thing_held_by_another`); silence when none is left."""
    if not run.pool or run.broad_recap:
        return None
    keep = [c for c in run.pool
            if off_focus(run.prompt, title=c.title, content=c.content, tags=labels(c), node_type=c.type,
                         content_max_chars=conf.content_max_chars, created=c.created) is None]
    beside = thing_held_by_another(typed_text(run.prompt), [(c.title, c.content) for c in keep])
    keep = [c for c, out in zip(keep, beside) if not out]
    if len(keep) == len(run.pool):
        return None
    run.drop(keep, STAGE_OFF_FOCUS)
    return None if run.pool else SILENT_OFF_FOCUS
