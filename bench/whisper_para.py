"""Where whisper loses its weakest categories' prompts (session 25, para3, issue 11): paraphrase, follow_up and
identity prompts on dev batches 1-15, each not fully right placed at the stage that lost it.

    python -m bench.whisper_para table ROUTES [--rows] [--categories paraphrase,follow_up,identity]

ROUTES is the --json output of bench.whisper_routes (dev). A prompt is fully right when it gets an expected memory
and nothing outside expect + accept. A prompt not fully right is placed by its best-placed expected memory (the one
that got furthest): never among the candidates (recall's top k and the identity set did not hold it), dropped
before the gate (the floor, the identity space, the overlap filter), below the gate, passed the gate and dropped
after (the focus stage, already served, the cap), or injected with a wrong memory beside it. A prompt that ended
before retrieval (an early exit, conversational) has no pool. The held-out batches (whisper_gate_fit.FRESH_BATCHES)
are left out: their failures are not read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES as HELD_OUT

CATEGORIES = ("paraphrase", "follow_up", "identity")
BEFORE_GATE = ("below_floor", "below_post_rerank_floor", "identity_space", "no_overlap")
AFTER_GATE = ("off_focus", "already_served", "cap", "budget", "exploration")
# The furthest a memory can get, best last: where a prompt is placed is its expected memory's furthest stage.
ORDER = ("no pool", "not a candidate", "before the gate", "below the gate", "after the gate", "injected")


def fully_right(record: dict) -> bool:
    injected = set(record["injected"])
    if record["kind"] != "inject":
        return not injected
    # A memory the history already served counts for the hit (bench.whisper_stores.run_one).
    got = injected | set(record.get("served", ()))
    return bool(got & set(record["expect"])) and injected <= set(record["good"])


def place(stage: str | None) -> str:
    if stage is None:
        return "not a candidate"
    if stage in BEFORE_GATE:
        return "before the gate"
    if stage == "below_gate":
        return "below the gate"
    if stage in AFTER_GATE:
        return "after the gate"
    if stage == "injected":
        return "injected"
    return "before the gate" if stage == "candidate" else stage


def loss(record: dict) -> tuple[str, str | None]:
    """(where, the expected memory's stage detail) for a prompt not fully right."""
    view = (record["gate"] or {}).get("identity")
    if not view:
        return "no pool", None
    pool = view.get("pool", {})
    best, detail = "not a candidate", None
    for key in record["expect"]:
        entry = pool.get(key)
        where = place(entry[0] if entry else None)
        if ORDER.index(where) > ORDER.index(best):
            best, detail = where, (entry[0] if entry else None)
    if best == "injected":
        return "hit, a wrong memory beside it", None
    wrong = [k for k in record["injected"] if k not in record["good"]]
    return best + (" (a wrong memory injected)" if wrong else " (silent)"), detail


def table(records: list[dict], categories: tuple[str, ...], rows: bool) -> list[str]:
    records = [r for r in records if r["batch"] not in HELD_OUT and r.get("category") in categories]
    counts: dict[tuple[str, str], int] = defaultdict(int)
    details: Counter = Counter()
    right = Counter()
    total = Counter()
    out_rows = []
    for r in records:
        total[r["category"]] += 1
        if fully_right(r):
            right[r["category"]] += 1
            continue
        where, detail = loss(r)
        counts[where, r["category"]] += 1
        counts[where, "all"] += 1
        if detail:
            details[where.split(" (")[0], detail, r["category"]] += 1
        if rows:
            out_rows.append(f"{r['category']:10} b{r['batch']:<2} {r['id']:7} {where:40} {detail or '':14} "
                            f"exp {','.join(r['expect'])} inj {','.join(r['injected'])} {r['prompt'][:70]!r}")
    cols = categories + ("all",)
    lines = ["| where the prompt is lost | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for where in sorted({w for w, _ in counts}, key=lambda w: -counts[w, "all"]):
        lines.append(f"| {where} | " + " | ".join(str(counts[where, c]) for c in cols) + " |")
    lines.append("| fully right | " + " | ".join(str(right[c]) for c in categories) + f" | {sum(right.values())} |")
    lines.append("| prompts | " + " | ".join(str(total[c]) for c in categories) + f" | {sum(total.values())} |")
    lines.append("")
    lines += [f"  {w}: stage {d} ({c}) {n}" for (w, d, c), n in sorted(details.items())]
    return lines + ([""] + sorted(out_rows) if rows else [])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table",))
    parser.add_argument("routes", type=Path, help="the --json output of bench.whisper_routes (dev)")
    parser.add_argument("--rows", action="store_true", help="also one line per prompt not fully right")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args(argv)
    records = json.loads(args.routes.read_text())
    print("\n".join(table(records, tuple(args.categories.split(",")), args.rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
