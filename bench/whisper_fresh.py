"""What whisper loses on the batches no rule was written for (session 27, fresh17, issue 11): every dev prompt of the
chosen batches that is not fully right, placed at the stage that lost it, with the memories around it.

    python -m bench.whisper_fresh losses ROUTES [--batches 16,17] [--rows]
    python -m bench.whisper_fresh show --max-words N [--batch B]   # a dev --show run with the cap at N words

ROUTES is the --json output of bench.whisper_routes (dev). A prompt not fully right is placed as bench.whisper_para
places it (its best-placed expected memory: not a candidate, dropped before the gate, below the gate, dropped after
it, or injected with a wrong memory beside it); a silent prompt that whispered is placed by the route of the memory
it whispered. Each row carries the expected memory's stage and gate score against its threshold, the wrong
memories injected with theirs, and the store the prompt is about (bench.prompt_groups.group_of). The held-out
batches (whisper_gate_fit.FRESH_BATCHES) are refused: their failures are not read.

`show` is one full `bench.whisper_stores --split dev --show` run (or one batch's) with the word cap of a question
about the user (`whisper.text.ABOUT_ME_MAX_WORDS`, 10 since session 9) set to N in this process only: the candidate
of docs/benchmarks.md "Whisper on fresh batches, session 27" (the questions about the user that batches 11-17 write
are longer than ten words). Its output is read by `bench.whisper_identity choose` and `compare`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from bench.prompt_groups import group_of
from bench.whisper_gate_fit import FRESH_BATCHES as HELD_OUT
from bench.whisper_para import fully_right, loss

DATASET = Path(__file__).parent / "datasets" / "whisper.json"


def _entry(record: dict, key: str) -> str:
    """"stage gate/threshold" of one memory in a prompt's pool, or "-" when it was no candidate."""
    pool = ((record["gate"] or {}).get("identity") or {}).get("pool", {})
    entry = pool.get(key)
    if not entry:
        return f"{key}:-"
    stage, _identity, gate, threshold, source = entry
    score = "" if gate is None else f" {gate:.2f}/{threshold:.2f}"
    return f"{key}:{stage}{score}{' id' if source == 'identity' else ''}"


def place(record: dict) -> str:
    """Where a prompt not fully right was lost: an inject prompt by bench.whisper_para.loss, a silent one by the
    route of what it whispered."""
    if record["kind"] == "inject":
        return loss(record)[0]
    routes = {row["key"]: row["route"] for row in (record["gate"] or {}).get("rows", []) if row.get("passed")}
    return "silent prompt whispered (" + ", ".join(sorted({routes.get(k, "?") for k in record["injected"]})) + ")"


def losses(records: list[dict], batches: set[int], show_rows: bool) -> list[str]:
    prompts = {p["id"]: p for p in json.loads(DATASET.read_text())["prompts"]}
    chosen = [r for r in records if r["batch"] in batches]
    counts: Counter = Counter()
    totals: Counter = Counter()
    rows = []
    for r in chosen:
        p = prompts.get(r["id"], r)  # a record of a prompt not in the dataset (a test) is its own prompt
        store = group_of(p, "store")
        totals[r["batch"], "all"] += 1
        totals[r["batch"], "right"] += fully_right(r)
        if fully_right(r):
            continue
        where = place(r)
        counts[where, r["batch"]] += 1
        if show_rows:
            wrong = [k for k in r["injected"] if k not in r["good"]]
            rows.append(f"b{r['batch']} {r['id']:7} {r['category']:12} {store:11} {p.get('space') or '-':12} {where}\n"
                        f"    expect {' '.join(_entry(r, k) for k in r['expect']) or '-'}"
                        f" | wrong {' '.join(_entry(r, k) for k in wrong) or '-'}\n    {r['prompt'][:300]!r}")
    cols = sorted(batches)
    lines = ["| where the prompt is lost | " + " | ".join(f"batch {b}" for b in cols) + " |",
             "|---|" + "---:|" * len(cols)]
    for where in sorted({w for w, _ in counts}, key=lambda w: -sum(counts[w, b] for b in cols)):
        lines.append(f"| {where} | " + " | ".join(str(counts[where, b]) for b in cols) + " |")
    lines.append("| fully right / prompts | " + " | ".join(f"{totals[b, 'right']} / {totals[b, 'all']}" for b in cols)
                 + " |")
    return lines + ([""] + rows if show_rows else [])


def show(max_words: int, batch: int | None) -> int:
    """One dev --show run with the question-about-the-user cap at `max_words` (this process only). Without a batch,
    the held-out batches are left out of the run (they are run once, on their own, by the decision rule)."""
    import bench.datasets.loader as loader
    import whisper.text
    from bench.whisper_stores import main as stores_main

    whisper.text.ABOUT_ME_MAX_WORDS = max_words
    if batch is None:
        loader.SEALED_BATCHES = frozenset(loader.SEALED_BATCHES) | frozenset(HELD_OUT)
    elif batch in HELD_OUT:
        print(f"batch {batch} is held out: its run prints its totals only", file=sys.stderr)
    return stores_main(["--split", "dev", "--show"] + ([] if batch is None else ["--batch", str(batch)]))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    cmd = sub.add_parser("losses")
    cmd.add_argument("routes", type=Path)
    cmd.add_argument("--batches", default="16,17")
    cmd.add_argument("--rows", action="store_true")
    run = sub.add_parser("show")
    run.add_argument("--max-words", type=int, required=True)
    run.add_argument("--batch", type=int)
    args = parser.parse_args(argv)
    if args.command == "show":
        return show(args.max_words, args.batch)
    batches = {int(b) for b in args.batches.split(",")}
    if batches & set(HELD_OUT):
        parser.error(f"batches {sorted(batches & set(HELD_OUT))} are held out: their failures are not read")
    print("\n".join(losses(json.loads(args.routes.read_text()), batches, args.rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
