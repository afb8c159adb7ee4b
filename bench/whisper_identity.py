"""Whisper's questions about the user (categories `identity` and `personal`): where they are lost, and a threshold of
the logistic gate for identity memories on first-person prompts, chosen left out by batch and by store (session 23,
issue 11; docs/benchmarks.md "Whisper identity, session 23").

    python -m bench.whisper_routes --split dev --json ROUTES.json          # every prompt's candidates and stages
    python -m bench.whisper_identity causes ROUTES.json                     # the table by cause, dev batches
    python -m bench.whisper_stores --split dev --gate-dump DUMP.json       # what reached the gate, per call
    python -m bench.whisper_identity first-person DUMP.json                 # the threshold, LOBO and LOSO
    python -m bench.whisper_identity compare BEFORE.txt AFTER.txt           # two dev `--show` runs, dev batches
    python -m bench.whisper_identity choose BASE.txt A.txt B.txt ...        # a setting per run, LOBO and LOSO

`causes` places each should-inject prompt of the two categories by what became of its expected memory (the one that
got furthest) in the prompt's last call. `first-person` replays the dump (bench.whisper_gate_fit.replay: the gate,
the focus stage, already served, the cap) with the logistic gate's threshold for an identity-linked hit on a prompt
about the user (`whisper.text.about_user`) moved from the gate's own (`GATE_LOGIT`) over a grid, every other
candidate as today; the value is chosen on all batches but one and scored on that one (and the same by store).
Prompts of whisper_gate_fit.FRESH_BATCHES (batch 14) and of loader.SEALED_BATCHES are left out of both.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from bench.datasets.loader import STORES  # the runnable stores: a sealed one (loader.SEALED_STORES) is left out

CATEGORIES = ("identity", "personal")
GRID = tuple(round(0.33 - 0.1 * i, 2) for i in range(0, 16))  # 0.33 (today's gate) down to -1.17
LATER = ("off_focus", "already_served", "cap")


def _held_out() -> frozenset[int]:
    from bench.datasets.loader import SEALED_BATCHES
    from bench.whisper_gate_fit import FRESH_BATCHES

    return frozenset(FRESH_BATCHES) | frozenset(SEALED_BATCHES)


def dev_label() -> str:
    """The dev batches a table or a comparison here reads, named: every dev batch below the first held-out or sealed
    one ("dev 1-16" while FRESH_BATCHES is {17}); the labels were written by hand and went stale as batches opened."""
    held = sorted(_held_out())
    return f"dev 1-{held[0] - 1}" if held else "dev"


def cause(record: dict) -> str | None:
    """Where a should-inject identity or personal prompt's expected memory was lost (None for other prompts), from
    bench.whisper_routes' record: its candidates in the last call ("pool": key -> [stage, identity, gate score,
    threshold, source]) and whether the identity route was taken."""
    if record["kind"] != "inject" or record.get("category") not in CATEGORIES:
        return None
    got, good = set(record["injected"]), set(record["good"])
    if got & set(record["expect"]):
        return "right" if got <= good else "found, a wrong memory beside it"
    view = (record["gate"] or {}).get("identity") or {}
    pool = view.get("pool", {})
    route = "identity route" if view.get("identity_route") else "no identity route"
    wrong = " (a wrong memory injected)" if got - good else ""
    seen = [pool[k] for k in record["expect"] if k in pool]
    if not seen:
        return f"{route}: not retrieved{wrong}"
    rank = {"below_floor": 0, "identity_space": 1, "no_overlap": 2, "below_gate": 3}
    stage, on_route, score, threshold, source = max(seen, key=lambda s: rank.get(s[0], 4))
    if stage in ("below_floor", "identity_space", "no_overlap"):
        where = f"dropped before the gate ({stage})"
    elif stage == "below_gate":
        if on_route:
            where = "under the identity route's cosine gate"
        elif source == "identity":
            where = "off the identity route (focus rule), under the cosine gate"
        else:
            where = "under the logistic gate"
    else:
        where = f"passed the gate, dropped at {stage}"
    return f"{route}: {where}{wrong}"


def cause_table(records: list[dict]) -> list[str]:
    held = _held_out()
    counts: Counter = Counter()
    for r in records:
        c = None if r["batch"] in held else cause(r)
        if c is not None:
            counts[c, r["category"]] += 1
            counts[c, "all"] += 1
    lines = [f"| where the expected memory is lost ({dev_label()}) | identity | personal | all |", "|---|---:|---:|---:|"]
    for c in sorted({c for c, _ in counts}, key=lambda c: -counts[c, "all"]):
        lines.append(f"| {c} | {counts[c, 'identity']} | {counts[c, 'personal']} | {counts[c, 'all']} |")
    return lines


def first_person_keys(dump: list[dict]) -> set[tuple[int, int, int]]:
    """The logistic-route hits that are identity-linked on a call whose own prompt is about the user."""
    from whisper.text import about_user

    out = set()
    for pi, item in enumerate(dump):
        texts = list(item["prompt"].get("history", ())) + [item["prompt"]["prompt"]]
        for ci, call in enumerate(item["calls"]):
            if not about_user(texts[ci]):
                continue
            out |= {(pi, ci, k) for k, c in enumerate(call or ()) if c["route"] == "logistic" and c["identity"]}
    return out


def fully_right(dump: list[dict], logits: dict, t: float) -> list[bool]:
    from bench.whisper_gate_fit import replay

    out = []
    for pi, item in enumerate(dump):
        p = item["prompt"]
        served, got = replay(item, pi, logits, t)
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        if p["kind"] == "inject":
            out.append(bool(set(p["expect"]) & (set(got) | served)) and all(k in good for k in got))
        else:
            out.append(not got)
    return out


def sweep(dump: list[dict]) -> dict[float, list[bool]]:
    """Per threshold of the first-person identity hits, every prompt fully right or not (today's weights)."""
    import numpy as np

    from bench.whisper_gate_fit import rows
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    x, _, where = rows(dump)
    w = np.array(GATE_WEIGHTS[1:])
    base = {k: float(GATE_WEIGHTS[0] + x[j] @ w) for j, k in enumerate(where)}
    marked = first_person_keys(dump)
    out = {}
    for t in GRID:
        logits = {k: v + (GATE_LOGIT - t if k in marked else 0.0) for k, v in base.items()}
        out[t] = fully_right(dump, logits, GATE_LOGIT)
    return out


def left_out(dump: list[dict], by_t: dict[float, list[bool]], by: str) -> tuple[int, dict[str, tuple]]:
    """Each group scored with the threshold chosen on the others (most prompts fully right; ties to the value
    nearest today's): the sum, and per group (chosen value, fully right there, today's)."""
    from bench.whisper_gate_fit import group_of
    from whisper.conf import GATE_LOGIT

    groups = [group_of(item["prompt"], by) for item in dump]
    total, per = 0, {}
    for g in sorted(set(groups)):
        def right(t, inside):
            return sum(ok for ok, gg in zip(by_t[t], groups) if (gg == g) == inside)
        chosen = max(GRID, key=lambda t: (right(t, False), -abs(t - GATE_LOGIT)))
        per[g] = (chosen, right(chosen, True), right(GATE_LOGIT, True))
        total += per[g][1]
    return total, per


def first_person(dump_path: Path) -> list[str]:
    from bench.whisper_gate_fit import prepared
    from whisper.conf import GATE_LOGIT

    held = _held_out()
    dump = [item for item in json.loads(dump_path.read_text()) if item["prompt"].get("batch", 1) not in held]
    dump = prepared(dump, open_overlap=False)
    by_t = sweep(dump)
    lines = [f"dev prompts {len(dump)}; fully right by the threshold of identity hits on first-person prompts:"]
    lines += [f"  {t:+.2f}: {sum(v)}" + ("  (today)" if t == GATE_LOGIT else "") for t, v in by_t.items()]
    today = sum(by_t[GATE_LOGIT])
    for by in ("batch", "store"):
        total, per = left_out(dump, by_t, by)
        lines.append(f"left out by {by}: {total} fully right against today's {today} (net {total - today:+d})")
        lines += [f"  {g}: chosen {t:+.2f}, {r} against {r0}" for g, (t, r, r0) in per.items()]
    return lines


def _dev_prompts() -> list[dict]:
    from bench.datasets.loader import SEALED_BATCHES

    held = _held_out()
    data = json.loads((Path(__file__).parent / "datasets" / "whisper.json").read_text())
    return [p for p in data["prompts"] if p.get("batch", 1) not in SEALED_BATCHES
            and p.get("batch", 1) not in held and p.get("split") == "dev"]


def _right(p: dict, run: dict) -> bool | None:
    """Fully right: an inject prompt's expected memory found (or served by its history) and nothing wrong injected;
    a silent prompt silent. None when the run has no line for the prompt."""
    if p["id"] not in run:
        return None
    got, served = run[p["id"]]
    good = set(p.get("expect", [])) | set(p.get("accept", []))
    if p["kind"] == "silent":
        return not got
    return bool(set(p["expect"]) & (set(got) | set(served))) and set(got) <= good


def choose(shows: list[Path]) -> list[str]:
    """Full dev runs, one per setting (the first: today's), scored on the dev batches not held out (dev_label): each batch (and each store) gets the
    setting with the most prompts fully right on the other batches (stores; ties to the earlier file), the sums."""
    from bench.whisper_gate_fit import group_of
    from bench.whisper_show_report import read_show

    prompts = _dev_prompts()
    runs = [read_show(f) for f in shows]
    right = [[bool(_right(p, run)) for p in prompts] for run in runs]
    lines = ["in sample: " + ", ".join(f"{f.name} {sum(r)}" for f, r in zip(shows, right))]
    for by in ("batch", "store"):
        groups = [group_of(p, by) for p in prompts]
        total, per = 0, []
        for g in sorted(set(groups), key=lambda g: (len(g), g)):
            def score(i, inside):
                return sum(ok for ok, gg in zip(right[i], groups) if (gg == g) == inside)
            best = max(range(len(runs)), key=lambda i: (score(i, False), -i))
            total += score(best, True)
            per.append(f"{g}: {shows[best].name} {score(best, True)} against {score(0, True)}")
        lines.append(f"left out by {by}: {total} against {sum(right[0])} (net {total - sum(right[0]):+d})")
        lines += ["  " + x for x in per]
    return lines


def compare(before: Path, after: Path) -> list[str]:
    """Two `bench.whisper_stores --show` outputs on the dev batches (the held-out and sealed ones left out): fully right
    before and after, by category, and the prompts made and broken."""
    from bench.whisper_show_report import read_show

    prompts = _dev_prompts()
    runs = [read_show(before), read_show(after)]
    right = _right

    by_cat: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    made, broken = [], []
    for p in prompts:
        a, b = right(p, runs[0]), right(p, runs[1])
        if a is None or b is None:
            continue
        cell = by_cat[p["category"]]
        cell[0] += a
        cell[1] += b
        cell[2] += 1
        if b and not a:
            made.append(f"{p['id']} (batch {p.get('batch', 1)}, {p['category']})")
        elif a and not b:
            broken.append(f"{p['id']} (batch {p.get('batch', 1)}, {p['category']})")
    total = [sum(v[i] for v in by_cat.values()) for i in range(3)]
    lines = [f"{dev_label()} fully right: {total[0]} -> {total[1]} of {total[2]} (net {total[1] - total[0]:+d})"]
    lines += [f"  {c}: {v[0]} -> {v[1]} of {v[2]}" for c, v in sorted(by_cat.items())]
    lines += [f"made {len(made)}: " + ", ".join(made), f"broken {len(broken)}: " + ", ".join(broken)]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("causes", "first-person", "compare", "choose"))
    parser.add_argument("file", type=Path)
    parser.add_argument("more", type=Path, nargs="*", help="compare, choose: the other `--show` outputs")
    args = parser.parse_args(argv)
    if args.what == "choose":
        print("\n".join(choose([args.file, *args.more])))
    elif args.what == "compare":
        print("\n".join(compare(args.file, args.more[0])))
    elif args.what == "causes":
        print("\n".join(cause_table(json.loads(args.file.read_text()))))
    else:
        print("\n".join(first_person(args.file)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
