"""Whisper's older hand rules, each switched off alone over the dev split (session 22, audit4).

    python -m bench.whisper_rules_audit_s22 OUT.json [VARIANT ...]   # every variant, the base run first and last
    python -m bench.whisper_rules_audit_s22 OUT.json --from 6 [VARIANT ...]   # dev batches 6 on only (a, b)
    python -m bench.whisper_rules_audit_s22 --report OUT.json [--ids]

The rules no audit has judged with today's batches: those before session 9 (22-23 Nov), of session 13 and those
session 13's audit kept ("Rules audited on fresh batches (session 13)" in docs/whisper.md). Run as
bench.whisper_rules_audit runs session 14-20's (one process, the stores seeded once, each variant's prompts in
sessions of their own, the memo caches cleared between variants; dev only, loader.SEALED_BATCHES never loaded).
Every batch of 6-13 landed on main after these rules, so `--report` reads what a rule adds (base minus the variant)
on dev 6-12 (a), batch 13 dev (b) and dev 1-5, the batches it was written from (c), in hits / wrong memories
whispered / broken silences, and in prompts made fully right / broken (docs/whisper.md, "Rules audited on fresh
batches (session 22)"). Batch 13's prompts are reported by id and count only.
"""

from __future__ import annotations

import importlib
import json
import re
import sys
from collections import Counter
from pathlib import Path
from unittest import mock

from bench.whisper_rules_audit import audit_run

NEVER = re.compile(r"(?!x)x")
FRESH = range(6, 13)
HELD_OUT = 13
TUNED = range(1, 6)


def _set(target, name, value):
    return mock.patch.object(target, name, value)


def variants() -> dict[str, callable]:
    """Name -> a function returning the patches that switch one rule off."""
    from django.conf import settings

    from memory.domain.search import MAX_QUERY_CHARS
    from whisper import imperative, kinds, text
    from whisper.services import respond
    from whisper.stages import early, focus, intent, scoring
    import whisper.pipeline as pipeline

    retrieve = importlib.import_module("whisper.stages.retrieve")
    real_run_stages, real_search, real_retrieve = pipeline.run_stages, retrieve._search, retrieve.retrieve

    def stages(replace: dict):
        """The pipeline with stages replaced (None: left out), as the service runs it."""
        new = tuple(replace.get(s, s) for s in pipeline.STAGES if replace.get(s, s) is not None)
        return _set(respond, "run_stages", lambda run, conf, deps, stages=new: real_run_stages(run, conf, deps, stages))

    def follow_up_alone_off():
        current = {}

        def wrapped(run, conf, deps):
            current["run"] = run
            try:
                return real_retrieve(run, conf, deps)
            finally:
                current.clear()

        def search(query, conf, deps, plain=None):
            run = current.get("run")
            if (run is not None and plain is None and run.follow_up and query.query == run.prompt[-MAX_QUERY_CHARS:]
                    and run.query != " ".join(run.prompt.split())):
                return []  # the follow-up's prompt searched alone: nothing found
            return real_search(query, conf, deps, plain)

        return [stages({real_retrieve: wrapped}), _set(retrieve, "_search", search)]

    def without(kind):
        return {k: v for k, v in kinds._ASKS.items() if k != kind}

    def ormah(**values):
        return mock.patch.dict(settings.ORMAH, {f"WHISPER_{k}": v for k, v in values.items()})

    def openers_only(prompt):
        return bool(imperative._REQUEST.search(prompt))

    return {
        # before session 9 (22-23 Nov)
        "pre follow-up by opener or pronoun (intent, text)": lambda: [
            _set(intent, "looks_like_follow_up", lambda p: False)],
        "pre topic repeat (intent)": lambda: [stages({intent.topic_repeat: None})],
        "pre acknowledgement exit (early)": lambda: [_set(early, "is_acknowledgement", lambda p: False)],
        "pre machine-prompt exit (early)": lambda: [_set(early, "synthetic_match", lambda *a, **k: None)],
        "pre machine-prompt exit: the bash output prefixes (early, text)": lambda: [_set(
            text, "SYNTHETIC_PREFIXES", tuple(
            p for p in text.SYNTHETIC_PREFIXES if not p.startswith("<bash-")))],
        "pre short-prompt exit (early)": lambda: [_set(early, "MIN_ALNUM", 0)],
        "pre conversational silence (intent)": lambda: [_set(intent, "CONVERSATIONAL", "(none)")],
        "pre broad recap (retrieve)": lambda: [_set(retrieve, "is_recap", lambda p: False)],
        # sessions 9-12, kept or restored by session 13's audit
        "s9 question about the user by text (retrieve, text)": lambda: [
            _set(retrieve, "user_question", lambda p: None)],
        "s9 preference task (retrieve)": lambda: [_set(retrieve, "preference_task", lambda p: False)],
        "s11 request by grammar (imperative)": lambda: [_set(imperative, "is_request", openers_only),
                                                        _set(focus, "is_request", openers_only)],
        "s9 asking leave (imperative)": lambda: [_set(imperative, "_ADVICE", NEVER)],
        "s11 space named by an ordinary word (retrieve)": lambda: [
            _set(retrieve, "prompt_names", lambda t, spaces: {w.lower() for w in retrieve.TOKEN_WORDS.findall(t)})],
        "s11 ordinary words read as names only where written as names (retrieve)": lambda: [
            _set(retrieve, "written_as_name", lambda t, w: True)],
        "s12 project named by an invented word wins (retrieve)": lambda: [
            _set(retrieve, "named_project", lambda others, t: next(iter(others)) if len(others) == 1 else None)],
        "s9 first-person question naming a project (retrieve)": lambda: [
            _set(retrieve, "names_a_project", lambda *a: False)],
        "s10 page from outside the project weighed down (retrieve)": lambda: [_set(retrieve, "PAGE_PENALTY", 0.0)],
        "s10 named page not weighed down, with s11's lift (retrieve)": lambda: [
            _set(retrieve, "names_page", lambda *a, **k: False)],
        "s11 named page lift (retrieve)": lambda: [_set(retrieve, "NAMED_PAGE_LIFT", 0.0)],
        "s12 follow-up also searched alone (retrieve)": follow_up_alone_off,
        "s9 identity memory off focus leaves the route, all (retrieve)": lambda: [
            _set(retrieve, "_off_focus", lambda run, pairs: None)],
        "s9 identity memory off focus: the focus part (retrieve, facts)": lambda: [
            _set(retrieve, "names_focus", lambda *a, **k: True)],
        "s10 ownership check (retrieve, text, facts)": lambda: [
            _set(retrieve, "_given_away", lambda *a, **k: False)],
        "s10 kinds of personal fact at the overlap filter (scoring, facts)": lambda: [
            _set(scoring, "question_facts", lambda q: set())],
        "s10 same-fact folds (lexicon, text)": lambda: [_set(text, "SAME_FACT", {})],
        "s9 phrases for a living, mother tongue (lexicon, text)": lambda: [_set(text, "PHRASES", ())],
        "s10 focus: possessive chain (focus)": lambda: [_set(focus, "chain_owners", lambda p: set())],
        "s10 focus: amount of money (kinds)": lambda: [_set(kinds, "_ASKS", without("amount"))],
        "s12 focus: time kind (kinds)": lambda: [_set(kinds, "_ASKS", without("time"))],
        "s12 focus: number kind (kinds)": lambda: [_set(kinds, "_ASKS", without("number"))],
        "s12 focus: person kind (kinds)": lambda: [_set(kinds, "_ASKS", without("person"))],
        "s12 focus: place kind (kinds)": lambda: [_set(kinds, "_ASKS", without("place"))],
        # session 13
        "s13 conventions a task needs (retrieve, conventions)": lambda: [
            _set(retrieve, "governs_task", lambda p: False), _set(retrieve, "standouts", lambda *a, **k: {})],
        "s13 per-project pass (retrieve, conf)": lambda: [ormah(PROJECT_PASS=False)],
    }


def run(out_path: Path, wanted: list[str], first: int = 1) -> int:
    return audit_run(out_path, variants, wanted, keep=lambda p: p.get("batch", 1) >= first)


def fully_right(o: dict) -> bool:
    return (not o["broken"]) if o["kind"] == "silent" else (o["hit"] and not o["wrong"])


def adds(base: dict, var: dict, batches) -> dict:
    """What the rule adds on the batches: hits, wrong memories, broken silences, prompts made fully right / broken."""
    out = Counter()
    changed = []
    for pid, b in base.items():
        if b["batch"] not in batches:
            continue
        v = var.get(pid)
        if v is None:  # a run over later batches only (--from)
            continue
        out["hits"] += b["hit"] - v["hit"]
        out["wrong"] += b["wrong"] - v["wrong"]
        out["broken"] += b["broken"] - v["broken"]
        out["made"] += fully_right(b) and not fully_right(v)
        out["broke"] += fully_right(v) and not fully_right(b)
        if (b["hit"], b["wrong"], b["broken"], b["injected"]) != (v["hit"], v["wrong"], v["broken"], v["injected"]):
            changed.append(pid)
    out["changed"] = len(changed)
    return {**out, "ids": changed}


def fmt(a: dict) -> str:
    if not a["changed"]:
        return "nothing"
    parts = [f"{a[k]:+d} {k}" for k in ("hits", "wrong", "broken") if a[k]]
    return f"{', '.join(parts) or 'same counts'}; fully right +{a['made']}/-{a['broke']} ({a['changed']} changed)"


def report(path: Path, show_ids: bool) -> int:
    data = json.loads(path.read_text())
    base = data["base"]
    if "base again" in data:
        print("base vs base again:", fmt(adds(base, data["base again"], range(1, 14))))
    exits = Counter(o["decision"] for o in base.values())
    print("base decisions:", dict(sorted(exits.items())))
    for name, var in data.items():
        if name.startswith("base"):
            continue
        a, b, c = adds(base, var, FRESH), adds(base, var, [HELD_OUT]), adds(base, var, TUNED)
        print(f"{name} | (a) 6-12: {fmt(a)} | (b) 13: {fmt(b)} | (c) 1-5: {fmt(c)}")
        if show_ids:
            print("    6-12:", a["ids"], " 13:", b["ids"], " 1-5:", c["ids"])
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    if argv[0] == "--report":
        return report(Path(argv[1]), "--ids" in argv)
    first = 1
    if "--from" in argv:
        at = argv.index("--from")
        first = int(argv[at + 1])
        del argv[at: at + 2]
    return run(Path(argv[0]), argv[1:], first)


if __name__ == "__main__":
    sys.exit(main())
