"""Which of the user's conventions or facts governs a task (docs/whisper.md, "Conventions a task needs").

A developer's agent mostly receives tasks, not questions ("write the commit msg", "make a venv and install the
deps", "just open the PR as is?"). The memory the user wants whispered then is a convention or fact of hers (commit
style, tooling, a rule on PR size, her handle), and it shares few words with the task: its raw cosine to the task
(0.2-0.5 with MiniLM) says little on its own, as the same cosine is noise for another prompt. What does say something
is how far that memory stands out from the rest of her identity set for this prompt: the activity a convention
governs is near the task, the other conventions and facts of her life are not. So a memory of the identity set
passes when its cosine to the task, measured against the other identity memories' cosines (its distance from their
mean in their standard deviations, leaving itself out), reaches `WhisperConf.standout_z` (4.5). Nothing here names
a store's words: the only word list is general shorthand a user types ("msg", "PR", "venv", "deps"), read as what it
stands for before the task is compared with the identity set.

Pure functions first, then the stage glue (`standouts`, `standout_gate`), which reaches I/O only through `Deps`.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from memory.domain.search import SearchHit
from memory.embeddings import embedder_of
from whisper.asked import remark_about_oneself
from whisper.classifier import IDENTITY
from whisper.conf import WhisperConf
from whisper.imperative import preference_task, written_in_words  # noqa: F401 (written_in_words: moved, kept importable)
from whisper.state import STAGE_CANDIDATE, STAGE_GATE, Deps, WhisperRun

# The numbers are WhisperConf's (ORMAH_WHISPER_STANDOUT_Z / _MIN_COSINE / _MIN_SET): the leave-one-out standard score
# a memory's cosine must reach over the rest of the identity set (standout_z, 4.5), its raw cosine to the task (a
# standout among memories all far from the task is no match; standout_min_cosine, 0.25), and the identity memories
# needed to measure a standout at all (the rest's spread is noise below that; standout_min_set, 8).
_DEFAULTS = WhisperConf()

# Shorthand users type for the things a convention governs, read as the words it stands for. General developer and
# everyday abbreviations; no store's words. Matched as whole words, case-insensitively ("PR", "PRs", "msg").
SHORTHAND: Mapping[str, str] = {
    "msg": "message", "msgs": "messages", "pr": "pull request", "prs": "pull requests", "mr": "merge request",
    "venv": "virtual environment", "virtualenv": "virtual environment", "env": "environment",
    "envs": "environments", "deps": "dependencies", "dep": "dependency", "repo": "repository",
    "repos": "repositories", "config": "configuration", "cfg": "configuration", "db": "database",
    "gh": "github", "pkg": "package", "pkgs": "packages", "lib": "library", "libs": "libraries",
    "func": "function", "fn": "function", "impl": "implementation", "py": "python", "kbd": "keyboard",
    "cmd": "command", "dir": "directory",
    "addr": "address", "dob": "date of birth", "appt": "appointment", "mtg": "meeting", "tmrw": "tomorrow",
    "tmr": "tomorrow", "w/": "with", "pls": "please", "plz": "please", "thx": "thanks", "u": "you",
    "ur": "your", "bday": "birthday", "tix": "tickets", "resto": "restaurant", "hols": "holidays",
}
_WORD = re.compile(r"(?<![\w/])([A-Za-z]+/?)(?![\w])")

# A task the user announces rather than asks for ("I'll just put it all in one big PR", "I'm going to pip install it
# globally", "gonna skip the tests"): a convention governs it as much as a request. Read at the prompt's start.
_ANNOUNCED = re.compile(r"^\s*(?:(?:ok(?:ay)?|so|right|fine|hmm)[,.!]?\s+)?(?:i(?:'ll|\u2019ll| will| shall)|"
                        r"i(?:'m|\u2019m| am) (?:going to|gonna|about to)|i plan to|i think i(?:'ll|\u2019ll| will)|"
                        r"gonna|going to|we(?:'ll|\u2019ll| will))\s+(?:just\s+)?[a-z]", re.IGNORECASE)


def expand_shorthand(text: str) -> str:
    """The text with general shorthand read as what it stands for ("write the commit msg" -> "write the commit
    message", "open the PR" -> "open the pull request"); everything else as written."""
    def full(m: re.Match[str]) -> str:
        return SHORTHAND.get(m.group(1).lower(), m.group(1))
    return _WORD.sub(full, text)


def announces_task(prompt: str) -> bool:
    """True when the prompt announces a task the user is about to do ("I'll just merge it as is", "I'm going to
    pip install it into the system python"), which a stored convention shapes as much as a request."""
    return bool(_ANNOUNCED.search(prompt)) and "\n" not in prompt.strip()


def governs_task(prompt: str) -> bool:
    """Whether a convention could govern the prompt: a task asked for or asked leave for (`preference_task`), or
    one the user announces (`announces_task`). A question about a fact ("what is …") is not one."""
    return preference_task(prompt) or announces_task(prompt)


def standout_scores(cosines: Mapping[str, float], *, min_set: int = _DEFAULTS.standout_min_set) -> dict[str, float]:
    """Each memory's leave-one-out standard score: (its cosine - the mean of the others') / the others' standard
    deviation. Empty below `min_set` memories (no spread to measure against) or when the others do not vary."""
    if len(cosines) < min_set:
        return {}
    values = list(cosines.values())
    n, total, squares = len(values), math.fsum(values), math.fsum(v * v for v in values)
    out = {}
    for key, v in cosines.items():
        mean = (total - v) / (n - 1)
        var = (squares - v * v) / (n - 1) - mean * mean
        if var > 1e-12:
            out[key] = (v - mean) / math.sqrt(var)
    return out


def passing(cosines: Mapping[str, float], *, z: float = _DEFAULTS.standout_z,
            min_cosine: float = _DEFAULTS.standout_min_cosine,
            min_set: int = _DEFAULTS.standout_min_set) -> dict[str, float]:
    """The memories that stand out for a task: leave-one-out standard score >= z and raw cosine >= min_cosine
    (id -> score)."""
    scores = standout_scores(cosines, min_set=min_set)
    return {k: round(s, 4) for k, s in scores.items() if s >= z and cosines[k] >= min_cosine}


# ---- the stage glue: retrieve asks which identity memories stand out, the gate lets them through

_FIRST_SENTENCE = re.compile(r"(?<=[.;!?])\s")
_CACHE_SIZE = 2048
_first_vectors: dict[tuple[str, str], np.ndarray] = {}  # (embedding model, sentence) -> vector, for this process
_CACHE_LOCK = threading.Lock()


def first_sentence(content: str) -> str:
    """A memory's first sentence: what it is about, without the details after it ("Commit messages follow
    Conventional Commits (…), subject under 72 characters, body explains why." is one sentence; "I prefer small
    pull requests …" the first of two)."""
    return _FIRST_SENTENCE.split(content.strip(), maxsplit=1)[0]




def _sentence_vectors(embed: Callable[[str], np.ndarray], sentences: Sequence[str]) -> list[np.ndarray]:
    """Vectors of the identity memories' first sentences, each embedded once per process and model (the set changes
    rarely; a new or edited memory adds one embedding), as passages in one batch when the embedder offers it (the
    way stored vectors are made). An embedder that does not say its model (a test's plain function) is not cached.
    The web master fills the cache before it forks (`warm_first_sentences`), so its workers share the vectors."""
    embedder = embedder_of(embed)
    model = embedder.model_id if embedder is not None else None
    keys = [(str(model), text) for text in sentences]
    with _CACHE_LOCK:
        found = {k: _first_vectors[k] for k in keys if model is not None and k in _first_vectors}
    missing = list(dict.fromkeys(text for (_, text) in keys if (str(model), text) not in found))
    if missing:
        vectors = embedder.embed_documents(missing) if embedder is not None else [embed(text) for text in missing]
        new = {(str(model), text): np.asarray(v, dtype=np.float32) for text, v in zip(missing, vectors)}
        found.update(new)
        if model is not None:
            with _CACHE_LOCK:
                if len(_first_vectors) + len(new) > _CACHE_SIZE:
                    _first_vectors.clear()
                _first_vectors.update(new)
    return [found[k] for k in keys]


def warm_first_sentences(embedder, identity_hits: Sequence[SearchHit], *,
                         min_set: int = _DEFAULTS.standout_min_set) -> None:
    """Embed the first sentences of an identity set that standouts() would read, into this process's cache: the
    web master does it before its workers fork, so no worker's first task call pays for the whole set."""
    if len(identity_hits) >= min_set:
        _sentence_vectors(embedder.embed_query, [first_sentence(h.content) for h in identity_hits])


def standouts(run: WhisperRun, deps: Deps, identity_hits: Sequence[SearchHit], conf: WhisperConf) -> dict[str, float]:
    """On a task a convention could govern, the identity memories that stand out for it (node id -> standard
    score, the better of two views: the memory's stored vector and its first sentence); {} otherwise. The task is
    compared with shorthand read out (one more embedding only when that changes it)."""
    if (len(identity_hits) < conf.standout_min_set or run.follow_up
            or not standout_prompt(run) or not written_in_words(run.prompt)):
        return {}
    text = expand_shorthand(run.prompt)
    vec = run.prompt_vec if text == run.prompt else deps.embed(text)
    if vec is None:
        return {}
    by_row = {h.row_id: h.node_id for h in identity_hits if h.row_id is not None}
    whole = {by_row[r]: c for r, c in deps.cosines(vec, list(by_row)).items() if r in by_row}
    firsts = _sentence_vectors(deps.embed, [first_sentence(h.content) for h in identity_hits])
    first = {h.node_id: float(np.dot(v, vec)) for h, v in zip(identity_hits, firsts) if v.shape == vec.shape}
    limits = {"z": conf.standout_z, "min_cosine": conf.standout_min_cosine, "min_set": conf.standout_min_set}
    found = passing(whole, **limits)
    for key, score in passing(first, **limits).items():
        found[key] = max(score, found.get(key, score))
    return found


def standout_prompt(run: WhisperRun) -> bool:
    """Whether the identity set's standouts are measured for this prompt: a task a convention could govern
    (`governs_task`) or a first-person prompt off the identity route that asks something (`first_person_need`).
    One place for the rule, so a bench can try another in its own process (bench/whisper_ident26.py, session 26)."""
    return governs_task(run.prompt) or first_person_need(run)


def first_person_off_route(run: WhisperRun) -> bool:
    """A prompt about the user (first person) that is no identity question, so it takes no identity route: "a form
    asks for my neighbourhood and how long I've lived there", "travel clinic asks which vaccines I've had this year".
    Session 23: the memory it needs stands out of the identity set as a task's convention does (docs/whisper.md,
    "Standouts on first-person prompts")."""
    return run.about_user and not (run.identity_question or (run.intent is not None and run.intent.has(IDENTITY)))


def first_person_need(run: WhisperRun) -> bool:
    """A first-person prompt off the identity route that is no remark about oneself (`whisper.asked.
    remark_about_oneself`: the user as subject, and no question, request, task or indirect question in any sentence
    or clause). A remark that asks nothing ("I'm so tired today") gets no standout: a whisper on each such remark
    would be noise in the agent's context (session 23, ident2; docs/whisper.md, "Standouts on first-person
    prompts")."""
    return first_person_off_route(run) and not remark_about_oneself(run.prompt, task=governs_task)


def standout_gate(run: WhisperRun, conf: WhisperConf) -> None:
    """After the injection gate: a candidate that stands out for the task passes whatever its own gate said (its
    gate score becomes its standard score, its threshold conf.standout_z, so the ledger shows why it passed); what the
    gate passed stays. A standout is a fallback (session 24, silence2): one the gate did not pass joins only when
    the gate passed nothing (beside a memory the gate passed, a standout was mostly wrong on dev 1-14: docs/whisper.md,
    "Standouts on first-person prompts")."""
    kept = {id(c) for c in run.pool}
    for cand in run.candidates:
        score = run.standouts.get(cand.node_id)
        if score is None or cand.stage not in (STAGE_GATE, STAGE_CANDIDATE) or (kept and id(cand) not in kept):
            continue
        cand.gate_score, cand.gate_threshold = score, conf.standout_z
        if id(cand) not in kept:
            cand.stage = STAGE_CANDIDATE
            run.pool.append(cand)
