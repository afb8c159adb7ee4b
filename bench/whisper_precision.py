"""Where dev 1-16's wrong memories stand at the logistic gate, and two replays past it (session 26, near3; issue 11).

    python -m bench.whisper_routes --split dev --json ROUTES   # one full dev run, every gate row recorded
    python -m bench.whisper_precision margins ROUTES           # right and wrong logistic memories by log-odds over
                                                               # the gate, and why the focus stage kept the wrong ones
    python -m bench.whisper_precision second ROUTES            # replay: a second logistic memory dropped when its
                                                               # log-odds are more than D below the first's
    python -m bench.whisper_precision standout ROUTES          # replay: in a project, a standout that is no
                                                               # preference dropped

Both replays only drop memories a base run injected, so they are a first look (a dropped memory can let a third one
of the pool in, which only a full run shows). Dev batches only: the held-out batch (bench.whisper_gate_fit.
FRESH_BATCHES) and the sealed ones are left out before anything is read (bench.whisper_silence.dev_prompts).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

BINS = (0.5, 1.0, 2.0, float("inf"))  # log-odds over the gate's threshold


def _passed(record: dict) -> dict[str, dict]:
    return {row["key"]: row for row in (record.get("gate") or {}).get("rows", []) if row["passed"]}


def margins(records: list[dict]) -> list[str]:
    """Right and wrong memories the logistic gate passed, by how far their log-odds stand over its threshold; the
    wrong ones also by why the focus stage read nothing against them (bench.whisper_near.why_kept) and the label."""
    from bench.whisper_near import why_kept
    from bench.whisper_silence import dev_prompts

    prompts = dev_prompts()
    by_bin, why = Counter(), Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        rows = _passed(r)
        for key in r["injected"]:
            row = rows.get(key)
            if row is None or row["route"] != "logistic":
                continue
            over = row["gate"] - row["threshold"]
            label = "right" if key in good else "wrong"
            by_bin[label, next(b for b in BINS if over < b)] += 1
            if label == "wrong":
                why[why_kept(p["prompt"]), p["kind"]] += 1
    lines = ["| log-odds over the gate | right | wrong |", "|---|---:|---:|"]
    low = 0.0
    for b in BINS:
        lines.append(f"| {low:g} to {b:g} | {by_bin['right', b]} | {by_bin['wrong', b]} |")
        low = b
    lines += ["", "| why the focus stage kept a wrong one | prompt labelled | memories |", "|---|---|---:|"]
    lines += [f"| {w} | {kind} | {n} |" for (w, kind), n in why.most_common()]
    return lines


def _replay(records: list[dict], keep: Callable[[dict, dict, str], bool]) -> list[str]:
    from bench.prompt_groups import group_of
    from bench.whisper_near import fully_right
    from bench.whisper_silence import dev_prompts

    prompts = dev_prompts()
    made, broken, net = [], [], Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        kept = [key for key in r["injected"] if keep(r, p, key)]
        before, after = fully_right(p, r["injected"]), fully_right(p, kept)
        if before == after:
            continue
        (made if after else broken).append(p["id"])
        net[str(group_of(p, "store"))] += 1 if after else -1
    return [f"made {len(made)} ({', '.join(made)}), broken {len(broken)} ({', '.join(broken)}): "
            f"net {len(made) - len(broken):+d}; by store " + ", ".join(f"{g} {v:+d}" for g, v in sorted(net.items()))]


def second(records: list[dict], gaps: tuple[float, ...] = (0.5, 1.0, 1.5, 2.0, 3.0)) -> list[str]:
    """A logistic memory whose log-odds are more than `gap` below the best logistic memory of the same call dropped
    (the cap keeps two: a second memory beside the answer is a quarter of the wrong ones)."""
    lines = []
    for gap in gaps:
        def keep(r, p, key, gap=gap):
            rows = {k: v for k, v in _passed(r).items() if v["route"] == "logistic" and k in r["injected"]}
            best = max((v["gate"] for v in rows.values()), default=None)
            return key not in rows or rows[key]["gate"] >= best - gap
        lines.append(f"gap {gap:g}: " + _replay(records, keep)[0])
    return lines


def standout(records: list[dict]) -> list[str]:
    """In a project's space, a standout (a memory sharing no word, passed by how far it stands out) kept only when it
    is a preference (a convention the task needs); elsewhere as today."""
    from bench.whisper_near import memories

    mems = memories()

    def keep(r, p, key):
        row = _passed(r).get(key)
        if row is None or row["route"] != "standout" or not p.get("space"):
            return True
        return mems.get(key, {}).get("type") == "preference"
    return _replay(records, keep)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("margins", "second", "standout"))
    parser.add_argument("routes", type=Path, help="the --json output of bench.whisper_routes (dev)")
    args = parser.parse_args(argv)
    records = json.loads(args.routes.read_text())
    print("\n".join({"margins": margins, "second": second, "standout": standout}[args.what](records)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
