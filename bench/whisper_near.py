"""Whisper's near misses that get a memory, and why the focus stage let each through (session 24, near2; issue 11).

    python -m bench.whisper_routes --split dev --json ROUTES   # one full dev run with every gate row recorded
    python -m bench.whisper_near table ROUTES                  # counts by why; add --rows for one line per memory
    python -m bench.whisper_near screen ROUTES                 # what this tree's focus stage drops of that run's
    python -m bench.whisper_near compare BASE.txt RUN.txt      # two full dev --show runs: made, broken, net by batch
                                                               # and by store, dev batches only

A near miss is a prompt labelled silent in the "near_miss" category: a memory on its topic exists, but none holds
what it asks. For every wrong memory injected on one (dev batches only, 1-16 in session 26: the held-out batch,
bench.whisper_gate_fit.FRESH_BATCHES, and the sealed ones, bench.datasets.loader.SEALED_BATCHES, are left out before
anything is read), the table says what the prompt asks (its asking sentences, `whisper.stages.focus.
asking_sentences`; the kinds of answer it asks for, `whisper.kinds.asked_kinds`), what the memory holds (its title)
and why `whisper.stages.focus.off_focus` kept it:

* "no asking sentence": no sentence asks (`whisper.asked.asks`) or requests (`whisper.imperative.is_request`), so no
  check reads anything;
* "asks, no kind": a sentence asks, but for no kind the focus stage knows (a method, a reason, a yes/no, a thing);
* "request, no kind": only a request (a task), no question;
* "kind held": it asks for a kind and the memory holds one (a date for "when", a number for "how many").

`screen` replays this tree's focus check (`whisper.stages.focus.off_focus`) on every memory a base run injected on a
dev prompt and lists the prompts whose outcome it would change: a first look at a focus change before its full
dev run (a dropped memory can let a third one of the pool in, which only the full run shows; the full run decides).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def memories() -> dict[str, dict]:
    """Every memory of the open stores by key (title, content, type)."""
    from bench.datasets.loader import merged_memories

    return {m["key"]: m for m in merged_memories()[0]}


def why_kept(prompt: str) -> str:
    """Why the focus stage reads nothing against a memory on this prompt, or "kind held" when it asks a kind."""
    from whisper.asked import asks
    from whisper.kinds import asked_kinds
    from whisper.pasted import typed_text
    from whisper.stages.focus import asking_sentences

    typed = typed_text(prompt)
    sentences = asking_sentences(typed)
    if not sentences:
        return "no asking sentence"
    if asked_kinds(typed):
        return "kind held"
    if any(asks(s) for s in sentences):
        return "asks, no kind"
    return "request, no kind"


def near_rows(records: list[dict]) -> list[dict]:
    """One row per wrong memory injected on a dev near miss (held-out and sealed batches left out)."""
    from bench.whisper_silence import dev_prompts, wrong_memories
    from whisper.kinds import asked_kinds
    from whisper.pasted import typed_text
    from whisper.stages.focus import asking_sentences

    prompts = dev_prompts()
    mems = memories()
    out = []
    for row in wrong_memories(records, prompts):
        if row["category"] != "near_miss":
            continue
        p = prompts[row["id"]]
        m = mems.get(row["key"], {})
        typed = typed_text(p["prompt"])
        out.append({**row, "prompt": p["prompt"], "why": why_kept(p["prompt"]),
                    "asking": asking_sentences(typed), "kinds": sorted(asked_kinds(typed)),
                    "title": m.get("title", "?"), "type": m.get("type", "?")})
    return out


def _focus_drops(records: list[dict]) -> list[tuple[dict, dict, list[str], list[str]]]:
    """(prompt, record, injected kept, dropped with why) for each dev prompt where this tree's focus check
    drops an injected memory."""
    from bench.whisper_silence import dev_prompts
    from datetime import datetime
    from whisper.conf import WhisperConf
    from whisper.stages.focus import off_focus

    prompts = dev_prompts()
    mems = memories()
    limit = WhisperConf().content_max_chars
    out = []
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        kept, dropped = [], []
        for key in r["injected"]:
            m = mems[key]
            created = datetime.fromisoformat(m["created"].replace("Z", "+00:00")) if m.get("created") else None
            why = off_focus(p["prompt"], title=m["title"], content=m["content"], tags=tuple(m.get("tags", ())),
                            node_type=m["type"], content_max_chars=limit, created=created)
            (kept if why is None else dropped).append(key if why is None else f"{key} ({why})")
        if dropped:
            out.append((p, r, kept, dropped))
    return out


def fully_right(p: dict, injected: list[str]) -> bool:
    """bench.whisper_stores' fully right: silent and nothing injected, or an expected memory and nothing wrong."""
    good = set(p.get("expect", [])) | set(p.get("accept", []))
    if p["kind"] == "silent":
        return not injected
    return bool(set(injected) & set(p.get("expect", []))) and set(injected) <= good


def screen(records: list[dict]) -> list[str]:
    from bench.prompt_groups import group_of

    lines, net = [], Counter()
    for p, r, kept, dropped in _focus_drops(records):
        before, after = fully_right(p, r["injected"]), fully_right(p, kept)
        change = "made" if after and not before else "broken" if before and not after else "same"
        net[change] += 1
        net[f"batch {p.get('batch', 1)}"] += (change == "made") - (change == "broken")
        net[group_of(p, "store")] += (change == "made") - (change == "broken")
        lines.append(f"{change:6} {p['id']} ({p['kind']}) {p['prompt'][:110]!r} drops {', '.join(dropped)}")
    lines.append(f"made {net['made']}, broken {net['broken']}, same {net['same']}: net {net['made'] - net['broken']:+d}")
    lines.append("  " + ", ".join(f"{k} {v:+d}" for k, v in sorted(net.items()) if k not in ("made", "broken", "same")))
    return lines


def compare(base: Path, run: Path) -> list[str]:
    """Two full dev `--show` runs (base, change) scored prompt by prompt on the dev batches (fully right as
    bench.whisper_identity reads it): the prompts made and broken, the net by batch and by store (rules 2 and 3 of
    docs/benchmarks.md "Whisper near misses, session 24")."""
    from bench.prompt_groups import group_of
    from bench.whisper_identity import _dev_prompts, _right, dev_label
    from bench.whisper_show_report import read_show

    prompts = _dev_prompts()
    a, b = read_show(base), read_show(run)
    made, broken, net = [], [], Counter()
    for p in prompts:
        before, after = bool(_right(p, a)), bool(_right(p, b))
        if before == after:
            continue
        (made if after else broken).append(p["id"])
        for by in ("batch", "store"):
            net[by, str(group_of(p, by))] += 1 if after else -1
    right = sum(bool(_right(p, a)) for p in prompts)
    lines = [f"{dev_label()}: {right} -> {right + len(made) - len(broken)} fully right of {len(prompts)}; "
             f"made {len(made)} ({', '.join(made)}), broken {len(broken)} ({', '.join(broken)}); "
             f"net {len(made) - len(broken):+d}"]
    for by in ("batch", "store"):
        groups = sorted({str(group_of(p, by)) for p in prompts}, key=lambda g: (len(g), g))
        lines.append(f"by {by}: " + ", ".join(f"{g} {net[by, g]:+d}" for g in groups))
    return lines


def table(records: list[dict], show_rows: bool = False) -> list[str]:
    from bench.whisper_identity import dev_label

    rows = near_rows(records)
    lines = [f"wrong memories on {dev_label()} near misses: {len(rows)} on {len({r['id'] for r in rows})} prompts", "",
             "| why the focus stage kept it | memories | prompts |", "|---|---:|---:|"]
    for why, n in Counter(r["why"] for r in rows).most_common():
        lines.append(f"| {why} | {n} | {len({r['id'] for r in rows if r['why'] == why})} |")
    lines += ["", "| route | memories |", "|---|---:|"]
    lines += [f"| {route} | {n} |" for route, n in Counter(r["route"] for r in rows).most_common()]
    lines += ["", "| store | memories |", "|---|---:|"]
    lines += [f"| {store} | {n} |" for store, n in Counter(r["store"] for r in rows).most_common()]
    if show_rows:
        lines.append("")
        for r in sorted(rows, key=lambda r: (r["why"], r["id"])):
            lines.append(f"{r['id']} [{r['why']}; {r['route']}; kinds {','.join(r['kinds']) or '-'}] "
                         f"{r['prompt'][:160]!r} -> {r['key']} ({r['type']}) {r['title'][:90]!r}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table", "screen", "compare"))
    parser.add_argument("routes", type=Path, help="the --json output of bench.whisper_routes (dev); compare: BASE")
    parser.add_argument("run", type=Path, nargs="?", help="compare: the change's full dev --show run")
    parser.add_argument("--rows", action="store_true", help="also one line per wrong memory")
    args = parser.parse_args(argv)
    if args.what == "compare":
        if args.run is None:
            parser.error("compare needs BASE and RUN")
        print("\n".join(compare(args.routes, args.run)))
        return 0
    records = json.loads(args.routes.read_text())
    print("\n".join(table(records, args.rows) if args.what == "table" else screen(records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
