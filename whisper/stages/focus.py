"""The question's focus beyond the identity route: a memory about the thing asked of, holding nothing of what is
asked about it, is not whispered (issue 11, item 9; docs/whisper.md, "The focus rule beyond the identity route").

Two checks, each a text rule on the prompt and the memory (title, text, labels); no store's words in them:

* **a possessive chain**: "when is Jonas's mother's birthday?" asks about the mother, not about Jonas: a memory that
  does not name every owner after the first ("mother") is about another thing than the one asked of.
* **the kind of answer** (whisper.kinds, the one table of kinds): "how much did the trip cost?" asks for an amount
  of money; a memory holding no amount (a currency sign or word beside a number) cannot answer it however much it
  says about the trip. The same for a time, a number, a person or a place: "when is Pixel's vet appointment?" and a
  vet note holding no date.

A third check, another name for the thing ("a Dutch passport" and "my Belgian passport"), was removed in session 13:
no dev prompt written after it changed (docs/whisper.md, "Rules audited on fresh batches").

The stage runs after the gate, so the memories it drops still set the best hit the gate measured the others against.
"""

from __future__ import annotations

import re

from whisper.conf import WhisperConf
from whisper.kinds import missing_kind
from whisper.state import SILENT_OFF_FOCUS, STAGE_OFF_FOCUS, Candidate, Deps, WhisperRun
from whisper.text import NOT_POSSESSIVE, fold, topic_tokens

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


# ---- the check and the stage

def off_focus(prompt: str, *, title: str, content: str, tags: tuple[str, ...] = ()) -> str | None:
    """Why a memory (its title, content and labels: tags, project) misses the question's focus ("chain: mother",
    "kind: amount"), or None when it does not."""
    text = f"{title}\n{content}\n{' '.join(tags)}"
    missing = chain_owners(prompt) - _words(text)
    if missing:
        return "chain: " + ", ".join(sorted(missing))
    kind = missing_kind(prompt, f"{title}\n{content}")
    return None if kind is None else "kind: " + kind


def labels(cand: Candidate) -> tuple[str, ...]:
    """A memory's tags and project: a project's notes rarely name it ("Run the Playwright tests with …"); the
    focus check reads them with its text (bench/whisper_stores.py replays it)."""
    return (*(cand.hit.tags if cand.hit is not None else ()), *((cand.space,) if cand.space else ()))


def focus_check(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Drop the memories past the gate that miss the prompt's focus (`off_focus`); silence when none is left."""
    if not run.pool or run.broad_recap:
        return None
    keep = [c for c in run.pool
            if off_focus(run.prompt, title=c.title, content=c.content, tags=labels(c)) is None]
    if len(keep) == len(run.pool):
        return None
    run.drop(keep, STAGE_OFF_FOCUS)
    return None if run.pool else SILENT_OFF_FOCUS
