"""Answer-type agreement on the labelled stores (session 27, atype17; issue 11): does the memory hold the KIND of
answer the prompt asks for (whisper.answer_type)?

    python -m bench.whisper_routes --split dev --json ROUTES   # one full dev run with every gate row recorded
    python -m bench.whisper_atype agree ROUTES                 # how often a kind is read, and held, right vs wrong
    python -m bench.whisper_atype screen ROUTES                # this tree's focus check on the run's injections
    python -m bench.whisper_atype expected                     # the dev answers the check would drop
    python -m bench.whisper_atype cpu                          # CPU per call of expected_kind and off_subject

Only the dev prompts a fit may read (bench.whisper_silence.dev_prompts: the held-out batch,
bench.whisper_gate_fit.FRESH_BATCHES, and the sealed ones are left out before anything is read).

`agree`: per kind asked (`expected_kind`), the dev prompts that ask it (inject / silent), and over the memories the
gate judged on them (each prompt's own call; the logistic gate and the identity route) how many hold the kind among
the right ones (expected or accepted) and among the wrong ones, split by whether the gate passed them.

`screen` (design, not a decision: the full dev run decides): each prompt's injected memories less those this tree's
focus check drops (`whisper.stages.focus.off_focus`, the answer type on the subject among its checks since session
27); a follow-up's context is read from its labelled history (`context_of`). Made / broken / net by batch and by store as bench.whisper_near's screen. `expected`: the expected
memories of the dev inject prompts asking a checked kind that `off_subject` drops, each checked directly.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from datetime import datetime
from pathlib import Path

ROUTES_JUDGED = ("logistic", "identity", "identity-no-word", "follow-up")


def _memories() -> dict[str, dict]:
    from bench.datasets.loader import merged_memories

    return {m["key"]: m for m in merged_memories()[0]}


def _text(m: dict) -> str:
    return f"{m['title']}\n{m['content']}"


def agree(records: list[dict]) -> list[str]:
    from bench.whisper_silence import dev_prompts
    from whisper.answer_type import KINDS, expected_kind, holds
    from whisper.conf import WhisperConf
    from whisper.kinds import scan_chars

    prompts, mems = dev_prompts(), _memories()
    limit_of = WhisperConf().content_max_chars
    asked: Counter = Counter()
    cells: Counter = Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        kind = expected_kind(p["prompt"])
        asked[kind or "-", p["kind"]] += 1
        if kind is None:
            continue
        good = set(p.get("expect", ())) | set(p.get("accept", ()))
        for row in (r["gate"] or {}).get("rows", []):
            if row["route"] not in ROUTES_JUDGED or row["key"] not in mems:
                continue
            m = mems[row["key"]]
            held = holds(_text(m), kind, limit=scan_chars(m["title"], limit_of))
            side = "right" if row["key"] in good else "wrong"
            cells[kind, side, "passed" if row["passed"] else "below", held] += 1
    n = sum(v for (k, _), v in asked.items())
    lines = [f"{n} dev prompts; asking a kind: {n - asked['-', 'inject'] - asked['-', 'silent']}", "",
             "| kind asked | inject prompts | silent prompts | right held/judged (passed; below) |"
             " wrong held/judged (passed; below) |", "|---|---:|---:|---|---|"]

    def cell(kind: str, side: str) -> str:
        parts = []
        for where in ("passed", "below"):
            held, total = cells[kind, side, where, True], cells[kind, side, where, True] + cells[kind, side, where, False]
            parts.append(f"{held}/{total}")
        return "; ".join(parts)

    for kind in (*KINDS, "-"):
        lines.append(f"| {kind} | {asked[kind, 'inject']} | {asked[kind, 'silent']} | "
                     f"{cell(kind, 'right') if kind != '-' else ''} | {cell(kind, 'wrong') if kind != '-' else ''} |")
    return lines


def context_of(p: dict) -> str:
    """What whisper's query joins before a follow-up's prompt (its last two earlier prompts), read from the labels:
    a prompt with a history that is labelled a follow-up or reads as one (`whisper.text.looks_like_follow_up`); the
    real run asks the intent classifier too."""
    from whisper.text import looks_like_follow_up

    history = p.get("history") or []
    if history and (p.get("category") == "follow_up" or looks_like_follow_up(p["prompt"])):
        return " ".join(history[-2:])
    return ""


def replay(record: dict, p: dict, mems: dict[str, dict], limit: int) -> list[str]:
    """One prompt's injected memories less those this tree's focus check drops (a follow-up read with its context,
    `context_of`)."""
    from whisper.stages.focus import off_focus

    out = []
    for key in record["injected"]:
        m = mems[key]
        created = datetime.fromisoformat(m["created"].replace("Z", "+00:00")) if m.get("created") else None
        if off_focus(p["prompt"], title=m["title"], content=m["content"], tags=tuple(m.get("tags", ())),
                     node_type=m["type"], content_max_chars=limit, created=created, context=context_of(p)) is None:
            out.append(key)
    return out


def screen(records: list[dict]) -> list[str]:
    from bench.prompt_groups import group_of
    from bench.whisper_near import fully_right
    from bench.whisper_silence import dev_prompts
    from whisper.conf import WhisperConf

    prompts, mems = dev_prompts(), _memories()
    conf = WhisperConf()
    lines, net = [], Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        after = replay(r, p, mems, conf.content_max_chars)
        if sorted(after) == sorted(r["injected"]):
            continue
        was, now = fully_right(p, r["injected"]), fully_right(p, after)
        change = "made" if now and not was else "broken" if was and not now else "same"
        net[change] += 1
        net["batch " + group_of(p, "batch")] += (change == "made") - (change == "broken")
        net[group_of(p, "store")] += (change == "made") - (change == "broken")
        lines.append(f"{change:6} {p['id']} ({p['kind']}) {p['prompt'][:100]!r} {r['injected']} -> {after}")
    lines.append(f"made {net['made']}, broken {net['broken']}, same {net['same']}: net {net['made'] - net['broken']:+d}")
    lines.append("  " + ", ".join(f"{k} {v:+d}" for k, v in sorted(net.items()) if k not in ("made", "broken", "same")))
    return lines


def expected(prompts: dict[str, dict] | None = None) -> list[str]:
    """The expected memories of the dev inject prompts asking a checked kind that `off_subject` would drop (each
    checked directly, whether or not a run injects it): what the check costs the answers."""
    from bench.whisper_silence import dev_prompts
    from whisper.answer_type import CHECKED, expected_kind, off_subject
    from whisper.conf import WhisperConf
    from whisper.kinds import scan_chars

    prompts = dev_prompts() if prompts is None else prompts
    mems, limit = _memories(), WhisperConf().content_max_chars
    lines, checked = [], 0
    for p in prompts.values():
        if p["kind"] != "inject" or expected_kind(p["prompt"]) not in CHECKED:
            continue
        for key in p.get("expect", ()):
            m = mems[key]
            checked += 1
            kind = off_subject(p["prompt"], title=m["title"], content=m["content"], context=context_of(p),
                               limit=scan_chars(m["title"], limit))
            if kind is not None:
                lines.append(f"{p['id']} ({kind}) {p['prompt'][:90]!r} drops {key} {m['title'][:60]!r}")
    return lines + [f"{len(lines)} of {checked} expected memories dropped"]


def cpu() -> list[str]:
    """CPU per call (time.process_time) of expected_kind over the dev prompts, and of off_subject (the focus stage's
    new check: once per memory past the gate) over every dev prompt asking a checked kind and every memory."""
    from bench.whisper_silence import dev_prompts
    from whisper.answer_type import CHECKED, expected_kind, off_subject

    prompts = [p["prompt"] for p in dev_prompts().values()]
    mems = list(_memories().values())
    t0 = time.process_time()
    asking = [prompt for prompt in prompts if expected_kind(prompt) in CHECKED]
    t1 = time.process_time()
    for prompt in asking:
        for m in mems:
            off_subject(prompt, title=m["title"], content=m["content"])
    t2 = time.process_time()
    calls = len(asking) * len(mems)
    return [f"expected_kind: {len(prompts)} prompts, {(t1 - t0) / len(prompts) * 1e6:.0f} us CPU a call",
            f"off_subject: {len(asking)} prompts asking a checked kind x {len(mems)} memories, "
            f"{(t2 - t1) / calls * 1e6:.0f} us CPU a call"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("agree", "screen", "expected", "cpu"))
    parser.add_argument("routes", type=Path, nargs="?", help="the --json output of bench.whisper_routes (dev)")
    args = parser.parse_args(argv)
    if args.what in ("cpu", "expected"):
        print("\n".join(cpu() if args.what == "cpu" else expected()))
        return 0
    if args.routes is None:
        parser.error(f"{args.what} needs ROUTES")
    records = json.loads(args.routes.read_text())
    print("\n".join(agree(records) if args.what == "agree" else screen(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
