"""Whisper's figures per labelling round and split, from saved `bench.whisper_stores --show` outputs.

    python -m bench.whisper_show_report bench/datasets/whisper.json before.txt [after.txt ...]

Each file is the stdout of one `--show` run (any split). Prints hit rate / precision / silence with their counts for
every batch and split the files hold, for batches 1 to the last but one together, and for all, one column per file,
so that a fresh batch's test half can be read beside the rest without running anything again. Scored as
bench/whisper_quality.score does (a memory served earlier in the session counts for the hit)."""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections import defaultdict
from pathlib import Path

from bench.datasets.loader import SEALED_BATCHES

LINE = re.compile(r"^(dev|test) (\S+)\s+(inject|silent)\s+(.+?)\s+(\[[^]]*\]) expect=(\[.*\])$")
SERVED = " (served by the history)"  # bench.whisper_stores marks a follow-up whose memory the history delivered


def read_show(path: Path) -> dict[str, tuple[list[str], list[str]]]:
    """Prompt id -> (injected ids, ids counted as served by the history) for every `--show` line of the file (the
    line names no served id: a marked prompt counts as served with its expected ids, as the bench scored it)."""
    out = {}
    for line in path.read_text().splitlines():
        m = LINE.match(line)
        if m:
            served = ast.literal_eval(m.group(6)) if m.group(4).endswith(SERVED) else []
            out[m.group(2)] = (ast.literal_eval(m.group(5)), served)
    return out


def figures(prompts: list[dict], outcomes: dict[str, tuple[list[str], list[str]]]) -> dict[str, int]:
    """Counts for hit rate, precision and silence over the prompts that have an outcome."""
    c = defaultdict(int)
    for p in prompts:
        if p["id"] not in outcomes:
            continue
        injected, served = outcomes[p["id"]]
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        c["injected"] += len(injected)
        c["correct"] += sum(1 for k in injected if k in good)
        if p["kind"] == "silent":
            c["silent"] += 1
            c["silent_ok"] += not injected
        else:
            c["inject"] += 1
            c["hits"] += bool(set(p["expect"]) & (set(injected) | set(served)))
    return c


def cell(c: dict[str, int]) -> str:
    if not c["inject"] and not c["silent"]:
        return "-"
    rate = lambda a, b: f"{a / b:.3f} ({a}/{b})" if b else "-"  # noqa: E731
    return f"{rate(c['hits'], c['inject'])} / {rate(c['correct'], c['injected'])} / {rate(c['silent_ok'], c['silent'])}"


def report(dataset: dict, runs: list[dict[str, tuple[list[str], list[str]]]]) -> list[str]:
    """One line per (rows, split): the rows are each batch, batches 1..last-1 together, and all."""
    prompts = [p for p in dataset["prompts"] if p.get("batch", 1) not in SEALED_BATCHES]  # never run (loader)
    batches = sorted({p.get("batch", 1) for p in prompts})
    groups = [(f"batch {b}", {b}) for b in batches]
    if len(batches) > 1:
        groups.append((f"batches {batches[0]}-{batches[-2]}", set(batches[:-1])))
    groups.append(("all", set(batches)))
    lines = []
    for split in ("dev", "test"):
        for name, members in groups:
            rows = [p for p in prompts if p["split"] == split and p.get("batch", 1) in members]
            cells = [cell(figures(rows, run)) for run in runs]
            if any(c != "-" for c in cells):
                lines.append(f"{split:4} {name:12} " + " | ".join(cells))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("shows", type=Path, nargs="+")
    args = parser.parse_args()
    dataset = json.loads(args.dataset.read_text())
    print("hit rate / precision / silence; columns: " + ", ".join(str(s) for s in args.shows))
    for line in report(dataset, [read_show(s) for s in args.shows]):
        print(line)


if __name__ == "__main__":
    main()
