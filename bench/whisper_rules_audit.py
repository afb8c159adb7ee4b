"""Whisper's hand rules of sessions 14-20, each switched off alone, over the dev split (session 21, audit2).

    python -m bench.whisper_rules_audit OUT.json [VARIANT ...]     # default: every variant, the base run first and last
    python -m bench.whisper_rules_audit OUT.json --batch 13 [VARIANT ...]   # one batch's dev prompts only

One process seeds the stores once (bench.whisper_stores.seed_stores), then runs every dev prompt (history first, in a
session of its own per variant) with whisper as it is ("base") and with one rule switched off by a patch of the
module's name in this bench process only (`VARIANTS`: each the code before the rule, or the rule's check answering
"no"); the memo caches are cleared between variants. Writes per variant and prompt: batch, kind, whether an
expected memory was whispered (hit), the wrong memories whispered and whether a silent prompt got one (broken).
Dev only; prompts of loader.SEALED_BATCHES are never loaded. docs/whisper.md, "Rules audited on fresh batches
(session 21)".
"""

from __future__ import annotations

import inspect
import json
import os
import re
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import timedelta
from pathlib import Path
from unittest import mock

from bench.whisper_quality import setup_django
from bench.whisper_stores import EMBEDDER, seed_stores


def _set(target, name, value):
    return mock.patch.object(target, name, value)


def _needs(present: bool, what: str):
    """A variant whose rule the audit removed (its code gone): AttributeError, so the run skips it."""
    if not present:
        raise AttributeError(f"{what} removed")
    return mock.patch.object(mock.sentinel, "unused", None, create=True)


def variants() -> dict[str, callable]:
    """Name -> a function returning the patches that switch one rule off."""
    from whisper import imperative, kinds, text
    try:
        from whisper import remark
    except ImportError:  # removed by the audit: its variants are skipped
        remark = None
    from whisper.stages import early, focus, gate, retrieve, scoring
    import whisper.pipeline as pipeline

    asked_kinds = kinds.asked_kinds
    asks_in_clause = getattr(imperative, "asks_in_clause", None)  # None once the audit removed it
    better_of = retrieve._better_of

    def count_as_number(prompt):
        found = asked_kinds(prompt)
        return frozenset({"number" if k == "count" else k for k in found})

    def without(kind):
        return {k: v for k, v in kinds._ASKS.items() if k != kind}

    money = getattr(kinds, "_MONEY_WORDS", None)  # None once session 22 removed the amount kind
    old_amount = money and re.compile(
        rf"\bhow (?:much|many)\b[^.?!]*(?:{money})"
        r"|\bhow (?:expensive|pricey|cheap)\b"
        r"|\bwhat (?:did|does|do|will|would)\b(?:(?!\b(?:when|if|because|after|before|while|since|until)\b)[^.?!])*"
        r"\bcost\b"
        r"|\bwhat(?:'s|\u2019s| is| was| were| are)? (?:the )?(?:total |full |final )?(?:price|fee|fees|bill|cost)\b",
        re.IGNORECASE)
    greetings = frozenset("morning evening afternoon goodnight good gm yo howdy hiya bye cheers".split())
    old_opener = remark and re.compile(r"^\s*(?:" + remark._INTERJECTION + r"[\s,.!;:]*)+", re.IGNORECASE)
    old_openers = re.compile(
        r"^\s*(?:(?:ok(?:ay)?|so|right|great|thanks|cool)[,.!]?\s+)?(?:and|also|plus|but|what about|how about|"
        r"what of|same for|and the|and what|and how|and where|and when|and who)\b", re.IGNORECASE)
    old_anaphora = re.compile(r"\b(?:he|she|him|her|his|hers|they|them|their|that one|the other one|the second time|"
                              r"the first one|the next one|those|these)\b|\bit\W*$", re.IGNORECASE)

    def whole_prompt_only(prompt):
        prompt = retrieve._APOSTROPHE_DROPPED.sub(r"\1's", prompt)
        return prompt if retrieve.asks_about_user(prompt) else None

    def no_apostrophe_fix(prompt):  # user_question as before 53267d9: "whats" left as typed
        if retrieve.asks_about_user(prompt):
            return prompt
        if retrieve._FENCE.search(prompt):
            return None
        for sentence in retrieve.sentences(prompt):
            for clause in retrieve._CLAUSE_END.split(sentence):
                if clause.strip() != prompt.strip() and retrieve.asks_about_user(clause.strip()):
                    return clause.strip()
        return None

    return {
        # session 14
        "s14 compounds (121e095)": lambda: [_set(scoring, "compounds", lambda text: set())],
        "s14 kind url (bd93e47)": lambda: [_set(kinds, "_ASKS", without("url"))],
        "s14 kind count (bd93e47)": lambda: [_set(kinds, "asked_kinds", count_as_number)],
        "s14 another version (bd93e47)": lambda: [_set(focus, "other_version", lambda *a, **k: None)],
        "s14 request: no ordinary word (d7f6f57)": lambda: [_set(imperative, "written_in_words", lambda p: True)],
        "s14 request: greetings closed (bd93e47)": lambda: [_set(imperative, "CLOSED_CLASS",
                                                            imperative.CLOSED_CLASS - greetings)],
        "s14 follow-up joined kept (b6bbedf) [retrieve]": lambda: [
            _needs("keep" in inspect.signature(better_of).parameters, "_better_of's keep"),
            _set(retrieve, "_better_of", lambda a, b, limit, keep=None: better_of(a, b, limit))],
        "s14 question alone searched (b6bbedf) [retrieve]": lambda: [_set(retrieve, "asked", lambda p: None)],
        # session 15
        "s15 another year (fe1dd56)": lambda: [_set(focus, "other_year", lambda *a, **k: None)],
        "s15 thing counted (556ceff)": lambda: [_set(focus, "counted_thing", lambda p: None)],
        # session 16
        "s16 dimension (0b42e09)": lambda: [_set(focus, "asked_dimension", lambda p: None)],
        "s16 goal for the past (0b42e09)": lambda: [_set(focus, "goal_for_the_past", lambda *a, **k: False)],
        "s16 last occurrence (4473eb6)": lambda: [_set(focus, "rule_for_an_occurrence", lambda *a, **k: False)],
        "s16 pasted output (d4faf93)": lambda: [_set(early, "is_pasted_output", lambda p: False)],
        "s16 remark (4dcfad2)": lambda: [_set(early, "is_remark", lambda p: False)],
        # session 18
        "s18 slash command (f44d69c)": lambda: [_set(pipeline, "slash_command_text", lambda p: None)],
        "s18 user clause (2b46231) [retrieve]": lambda: [_set(retrieve, "_CLAUSE_END", retrieve._CLAUSE_END),
                                                         _set(retrieve, "user_question", whole_prompt_only)],
        "s18 whats (53267d9) [retrieve]": lambda: [
            _set(retrieve, "_APOSTROPHE_DROPPED", retrieve._APOSTROPHE_DROPPED),  # AttributeError once removed
            _set(retrieve, "user_question", no_apostrophe_fix)],
        "s18 described elsewhere (4550f14) [retrieve]": lambda: [
            _set(retrieve, "_described_elsewhere", lambda *a, **k: [])],
        "s18 kind id (6fad63c)": lambda: [_set(kinds, "_ASKS", without("id"))],
        "s18 no version held (6fad63c)": lambda: [_set(focus, "no_version", lambda *a, **k: False)],
        # session 19
        "s19 focus reads typed text (cd7570d)": lambda: [_set(focus, "typed_text", lambda p: p)],
        "s19 pay/spend asks money (cd7570d)": lambda: [_needs(money is not None, "the amount kind"),
                                                       _set(kinds, "_ASKS", {**kinds._ASKS, "amount": old_amount})],
        "s19 no date for the past (cd7570d)": lambda: [_set(focus, "no_date_for_the_past", lambda *a, **k: False)],
        "s19 set aside (cd7570d)": lambda: [_set(focus, "about_set_aside", lambda *a, **k: None)],
        "s19 thing held by another (9d00755)": lambda: [
            _set(focus, "thing_held_by_another", lambda prompt, texts: [False] * len(texts))],
        "s19 remark: word said back (9d00755)": lambda: [_set(remark, "_OPENER", old_opener)],
        "s19 remark: own plan (9c09588)": lambda: [_set(remark, "_OWN_PLAN", re.compile(r"(?!x)x"))],
        "s19 tag question (57ea181)": lambda: [_set(focus, "_tag_question", lambda p: False)],
        "s19 follow-up there/kind of/en (38bd1a8)": lambda: [_set(text, "_FOLLOW_UP_OPENERS", old_openers),
                                                             _set(text, "_ANAPHORA", old_anaphora)],
        "s19 stop hook synthetic (6530fa6)": lambda: [_set(text, "SYNTHETIC_PREFIXES", tuple(
            p for p in text.SYNTHETIC_PREFIXES if p != "stop hook feedback:"))],
        "s19 version token (b4d7b16)": lambda: [_set(text, "VERSION", re.compile(r"(?!x)x"))],
        "s19 standout past overlap (1471c5d) [scoring]": lambda: [_set(scoring, "standing", lambda *a, **k: None)],
        "s19 served apart (1e908eb) [gate]": lambda: [_set(gate, "served_apart", lambda *a, **k: frozenset())],
        # the five rules in other helpers' files whose removal the audit proposes, switched off together
        "proposed to the lead, together": lambda: [
            _set(retrieve, "_better_of", lambda a, b, limit, keep=None: better_of(a, b, limit)),
            _set(retrieve, "user_question", lambda p: p if retrieve.asks_about_user(p) else None),  # as before 2b46231
            _set(scoring, "standing", lambda *a, **k: None),
            _set(gate, "served_apart", lambda *a, **k: frozenset())],
        # session 20
        "s20 questions not requests (99d1041)": lambda: [_set(imperative, "closes_as_question", lambda p: False)],
        "s20 clause of time/place/manner (919b03f)": lambda: [
            _set(imperative, "asks_in_clause", lambda clause, marked=True: asks_in_clause(clause, True))],
    }


def clear_caches() -> None:
    from whisper import facts, text
    from whisper.stages import scoring

    for fn in (text.fold, text._topic_tokens, text._page_topic_tokens, scoring.memory_words,
               scoring._page_memory_words, scoring._space_words):
        fn.cache_clear()
    for name in dir(facts):
        obj = getattr(facts, name)
        if hasattr(obj, "cache_clear"):
            obj.cache_clear()


def run_all(prompts, ids, now, tag: str) -> dict[str, dict]:
    from whisper.models import WhisperDecisionRow
    from whisper.services import whisper_respond

    keys = {v: k for k, v in ids.items()}
    out = {}
    for p in prompts:
        session = f"{tag}-{p['id']}"
        for i, earlier in enumerate(p.get("history", [])):
            whisper_respond(prompt=earlier, session_id=session, space=p.get("space"),
                            now=now - timedelta(seconds=30 * (len(p["history"]) - i)))
        result = whisper_respond(prompt=p["prompt"], session_id=session, space=p.get("space"), now=now)
        injected = [keys.get(n, n) for n in result.node_ids]
        expect = set(p.get("expect", []))
        good = expect | set(p.get("accept", []))
        got = set(injected)
        if p.get("history") and p["kind"] == "inject" and not expect & got:
            rows = WhisperDecisionRow.objects.filter(session_id=session, decision="injected")
            got |= expect & {keys.get(n, n) for row in rows for n in row.node_ids}
        out[p["id"]] = {"batch": p.get("batch", 1), "kind": p["kind"], "decision": result.decision,
                        "injected": injected, "hit": p["kind"] == "inject" and bool(expect & got),
                        "wrong": sum(1 for k in injected if k not in good),
                        "right": sum(1 for k in injected if k in good),
                        "broken": p["kind"] == "silent" and bool(injected)}
    return out


def audit_run(out_path: Path, table_of: Callable[[], dict], wanted: list[str], *, keep: Callable[[dict], bool]) -> int:
    """Seed the stores once in a temporary home, then run the base, every variant of `table_of()` a name in `wanted`
    is part of (all when empty) and the base again over the dev prompts `keep` accepts (loader.SEALED_BATCHES never
    loaded), the memo caches cleared between; the results go to `out_path` after each variant. Shared by the
    session 21 and session 22 audits (bench.whisper_rules_audit_s22)."""
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-rules-audit-") as tmp:
        setup_django(Path(tmp))
        from bench.datasets.loader import SEALED_BATCHES

        ids, scenarios = seed_stores()
        prompts = [p for p in scenarios.prompts_in("dev") if p.get("batch", 1) not in SEALED_BATCHES and keep(p)]
        table = table_of()
        names = ["base", *(n for n in table if not wanted or any(w in n for w in wanted)), "base again"]
        results = {}
        for k, name in enumerate(names):
            clear_caches()
            started = time.process_time()
            with ExitStack() as stack:
                try:
                    for patch in ([] if name.startswith("base") else table[name]()):
                        stack.enter_context(patch)
                except AttributeError as exc:  # the rule's code is gone (removed by the audit)
                    print(f"{name}: skipped ({exc})", file=sys.stderr)
                    continue
                results[name] = run_all(prompts, ids, scenarios.now, f"v{k}")
            clear_caches()
            print(f"{name}: {time.process_time() - started:.1f} s CPU, load {open('/proc/loadavg').read().split()[0]}",
                  file=sys.stderr, flush=True)
            out_path.write_text(json.dumps(results))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    batch = None
    if "--batch" in argv:  # only the dev prompts of one batch (session 22: batch 13, to find which rule moves it)
        at = argv.index("--batch")
        batch = int(argv[at + 1])
        del argv[at: at + 2]
    return audit_run(Path(argv[0]), variants, argv[1:], keep=lambda p: batch in (None, p.get("batch", 1)))

if __name__ == "__main__":
    sys.exit(main())
