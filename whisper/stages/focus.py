"""The question's focus beyond the identity route: a memory about the thing asked of, holding nothing of what is
asked about it, is not whispered (issue 11, item 9; docs/whisper.md, "The focus rule beyond the identity route").

The checks, each a text rule on the prompt and the memory (title, text, labels; its creation date for a year); no
store's words in them:

* **the kind of answer** (whisper.kinds, the one table of kinds): "how much did the trip cost?" asks for an amount
  of money, and so does "what did we pay for the hotel?" (session 24); a memory holding no amount (a currency sign
  or word beside a number) cannot answer it however much it says about the trip. The same for a time or a number:
  "when is Pixel's vet appointment?" and a vet note holding no date.

* **the thing counted** (session 15, whisper.kinds): "how many crash mats are there?" is not answered by a note whose
  only counts count other things ("the two highest top-outs").
* **the version asked** (session 18): "which version of lxml do we pin?" is not answered by a note naming none.
* **the answer type on the asked subject** (session 27, whisper.answer_type): "how many beta bakers dropped off?" is
  not answered by a note whose only count ("41 sign-ups") sits in a sentence naming neither bakers nor dropping off;
  nor "aunt rania's phone number?" by a note holding no phone number, e-mail or address.
* **another year** (session 15, whisper.when): "what was the contribution back in 2023?" is not answered by a note on
  the contribution from July 2026 on, nor "what did the grant give us in 2024?" by the event note of 2025's grant;
  since session 16 nor "who audited the 2024 accounts?" by a fact on "the 2026 accounts" (a year that labels).
* **a goal for the past** (session 16): "which level did I pass last time?" is not answered by the goal to pass one.

A third check, another name for the thing ("a Dutch passport" and "my Belgian passport"), was removed in session 13,
in session 22 the possessive chain ("when is Jonas's mother's birthday?", session 10), and in session 21 another version (session 14), the dimension of a measure and the last occurrence (session 16), a
past date asked, the thing set aside and the thing held by another memory (session 19): no dev prompt written after
them changed (docs/whisper.md, "Rules audited on fresh batches").

The stage runs after the gate, so the memories it drops still set the best hit the gate measured the others against.
"""

from __future__ import annotations

import re
from datetime import datetime

from memory.domain.enums import NodeType
from whisper.answer_type import off_subject
from whisper.asked import asks
from whisper.conf import WhisperConf
from whisper.imperative import is_request
from whisper.pasted import typed_text
from whisper.kinds import (
    VERSION_ASKED, asked_kinds, counted_thing, holds_count_of, missing_kind, scan_chars,
)
from whisper.state import SILENT_OFF_FOCUS, STAGE_OFF_FOCUS, Candidate, Deps, WhisperRun
from whisper.text import topic_tokens
from whisper.when import asked_points, may_name_a_year, other_time

# ---- the versions a text names (read by the version asked, below)

# A dotted number ("1.1", "v2.3.0", "3.12"), not a decimal with a unit ("2.5 kg", "0.5 ms") nor a part of a longer
# token (an address "10.0.0.1" is read whole).
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+){1,3})(?![\w.]*\d)(?!\s?(?:%|(?:kg|g|km|m|cm|mm|mb|gb|kb|tb|ms|s|"
                      r"sec|min|h|hrs?|px|l|ml|x|k)\b))", re.IGNORECASE)


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
    (`holds_version`): a note on the package that holds no version cannot say which one. The whole text is read (a
    doc's pinned version may sit past the first 2,000 characters)."""
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


# ---- the check and the stage

def off_focus(prompt: str, *, title: str, content: str, tags: tuple[str, ...] = (),
              node_type: str = NodeType.FACT, content_max_chars: int = 0,
              created: datetime | None = None, context: str = "") -> str | None:
    """Why a memory (its title, content and labels: tags, project; no check reads the labels since session 22
    removed the possessive chain) misses the question's focus ("kind: amount", "count of: mats", "goal: past asked",
    "version: none held", "year: 2023", "answer type: count"), or None when it does not. The prompt is read as typed (`whisper.pasted.typed_text`: harness elements and fenced pastes cut out).
    `node_type` tells an event (one occurrence, which another year's note is not) from a standing rule
    (`other_year`); `created` is the memory's creation date (`other_year`); `content_max_chars` (the conf's) widens
    the kind and count checks' reading to what whisper renders (`whisper.kinds.scan_chars`); `context` is what a
    follow-up's query joined before it, read for the asked subject (`whisper.answer_type.off_subject`)."""
    prompt = typed_text(prompt)
    kind = missing_kind(prompt, f"{title}\n{content}", limit=scan_chars(title, content_max_chars))
    if kind is not None:
        return "kind: " + kind
    thing = counted_thing(prompt)
    if (thing is not None and "count" in asked_kinds(prompt)
            and not holds_count_of(f"{title}\n{content}", thing, limit=scan_chars(title, content_max_chars))):
        return "count of: " + thing
    if goal_for_the_past(prompt, node_type):
        return "goal: past asked"
    if no_version(prompt, f"{title}\n{content}"):
        return "version: none held"
    year = other_year(prompt, f"{title}\n{content}", created, node_type)
    if year is not None:
        return "year: " + year
    kind = off_subject(prompt, title=title or "", content=content, context=context,
                       limit=scan_chars(title or "", content_max_chars))
    return None if kind is None else "answer type: " + kind


def labels(cand: Candidate) -> tuple[str, ...]:
    """A memory's tags and project: a project's notes rarely name it ("Run the Playwright tests with …"); the
    focus check reads them with its text (bench/whisper_stores.py replays it)."""
    return (*(cand.hit.tags if cand.hit is not None else ()), *((cand.space,) if cand.space else ()))


def focus_check(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Drop the memories past the gate that miss the prompt's focus (`off_focus`); silence when none is left."""
    if not run.pool:
        return None
    keep = [c for c in run.pool
            if off_focus(run.prompt, title=c.title, content=c.content, tags=labels(c), node_type=c.type,
                         content_max_chars=conf.content_max_chars, created=c.created,
                         context=run.query if run.follow_up else "") is None]
    if len(keep) == len(run.pool):
        return None
    run.drop(keep, STAGE_OFF_FOCUS)
    return None if run.pool else SILENT_OFF_FOCUS
