"""Whisper as the store grows: dev 1-17 with N unrelated memories added to the whisper home (issue 11;
docs/benchmarks.md "Whisper and the store's size, session 27").

    python -m bench.whisper_scale show --n 500 > N500.txt          # one dev 1-17 run with 500 distractors
    python -m bench.whisper_scale table N0.txt N500.txt N1000.txt  # the docs table; the first file is the reference

`show` is `bench.whisper_stores --split dev --show` (the same code path; batch 18 is left out of the process as
bench/whisper_ident17.without_held_out does) with N LoCoMo dev turns remembered into the home after the labelled
stores are seeded (so every labelled memory keeps its row id and creation order; N = 0 is the plain run). Each turn
is one memory "Speaker: text" (plus " [shares CAPTION]"), created at its session's date, in no space, not about the
user, through `nodes_remember` one call per session (its `now` the session's date). The turns are another person's
chat (LoCoMo, CC BY-NC: read from ../shared/benchmarks/locomo-dev/ when present, never copied into the repository; an
absent file stops the run with a plain message): no label names them, so every one injected is a wrong memory. They
are picked round robin over the five conversations, each conversation's turns in order, so a smaller N is a prefix of
a larger one. Their vectors come from the bench's disk cache of the real model (bench/datasets/embed_cache.py).

Besides the outcome lines, `show` prints `# distractors N` and the whisper CPU line (process time per whisper_respond
call, history calls included) to stdout, which `table` reads.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from itertools import groupby
from pathlib import Path

KEY_PREFIX = "x:"  # a distractor's key: no labelled store's prefix (bench.prompt_groups.STORE_OF_KEY)
CPU = re.compile(r"whisper CPU: (\d+) calls, mean ([\d.]+) ms, median ([\d.]+) ms, p95 ([\d.]+) ms")
HEADER = re.compile(r"^# distractors (\d+)( outdated)?$")


def pick(convs, n: int) -> list[tuple[str, object]]:
    """The first n turns taken round robin over the conversations (each in its own order), as (key, Turn)."""
    queues = [[(f"{KEY_PREFIX}{c.sample_id}:{t.dia_id}", t) for t in c.turns] for c in convs]
    total = sum(len(q) for q in queues)
    if n < 0 or n > total:
        raise ValueError(f"--n must be between 0 and {total} (the split's turns), not {n}")
    out: list[tuple[str, object]] = []
    depth = 0
    while len(out) < n:
        for q in queues:
            if depth < len(q) and len(out) < n:
                out.append(q[depth])
        depth += 1
    return out


def is_distractor(key: str) -> bool:
    return key.startswith(KEY_PREFIX)


def remember(picked: list[tuple[str, object]], *, outdated: bool = False) -> dict[str, str]:
    """Write the picked turns into the current home, one nodes_remember per session date; returns key -> node id.
    `outdated`: each is then marked outdated a day after its session (valid_until), so recall leaves it out of its
    hits (a prompt that asks for history aside) while it still counts in the store's statistics."""
    from datetime import timedelta

    from memory.domain.requests import NodeCreate, NodePatch
    from memory.services import node_update, nodes_remember

    ids: dict[str, str] = {}
    ordered = sorted(picked, key=lambda kt: kt[1].created)
    for created, group in groupby(ordered, key=lambda kt: kt[1].created):
        group = list(group)
        items = [(NodeCreate(content=t.text, created=t.created, source="bench:scale"), None) for _, t in group]
        results = nodes_remember(items=items, now=created, auto_link=False)
        ids.update((key, r.node.id) for (key, _), r in zip(group, results))
        if outdated:
            until = created + timedelta(days=1)
            for r in results:
                node_update(ref=r.node.id, patch=NodePatch(valid_until=until), now=until)
    return ids


def install(n: int, *, outdated: bool = False) -> None:
    """In this process: dev 1-17 only, and N distractors remembered after the labelled stores are seeded (marked
    outdated with `outdated`: `remember`)."""
    import bench.whisper_stores as stores
    from bench.locomo_data import load_split
    from bench.whisper_ident17 import without_held_out

    without_held_out()
    picked = pick(load_split(), n) if n else []
    real = stores.seed_stores

    def seed_stores():
        ids, scenarios = real()
        if picked:
            late = [key for key, t in picked if t.created >= scenarios.now]
            if late:
                raise ValueError(f"{len(late)} distractors are dated after the scenarios' clock")
            ids = ids | remember(picked, outdated=outdated)
        return ids, scenarios

    stores.seed_stores = seed_stores


def read_run(path: Path) -> dict:
    """A `show` file: its N, outcome lines (bench.whisper_show_report.read_show) and CPU figures (None if absent)."""
    from bench.whisper_show_report import read_show

    text = path.read_text()
    head = next((m for line in text.splitlines() if (m := HEADER.match(line))), None)
    cpu = CPU.search(text)
    return {"n": head and int(head.group(1)), "outdated": bool(head and head.group(2)), "outcomes": read_show(path),
            "cpu": None if cpu is None else {"calls": int(cpu.group(1)), "p50": float(cpu.group(3)),
                                             "p95": float(cpu.group(4))}}


def row(prompts: list[dict], run: dict, ref: dict) -> dict:
    """One run's figures over the prompts it has lines for, made / broken against the reference run."""
    from bench.whisper_identity import _right
    from bench.whisper_show_report import figures

    outcomes = run["outcomes"]
    c = figures(prompts, outcomes)
    right = made = broken = 0
    for p in prompts:
        after, before = _right(p, outcomes), _right(p, ref["outcomes"])
        if after is None:
            continue
        right += after
        if before is not None:
            made += after and not before
            broken += before and not after
    injected = [k for p in prompts if p["id"] in outcomes for k in outcomes[p["id"]][0]]
    counts = {k: c[k] for k in ("hits", "inject", "correct", "injected", "silent_ok", "silent")}  # 0 when absent
    return {**counts, "right": right, "made": made, "broken": broken,
            "prompts": sum(p["id"] in outcomes for p in prompts),
            "distractors": sum(map(is_distractor, injected)),
            "with_distractor": sum(any(map(is_distractor, outcomes[p["id"]][0])) for p in prompts
                                   if p["id"] in outcomes)}


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f} ({a}/{b})" if b else "-"


def table(paths: list[Path]) -> list[str]:
    from bench.whisper_identity import _dev_prompts

    prompts = _dev_prompts()
    runs = [read_run(p) for p in paths]
    lines = ["| N distractors | prompts | hit rate | precision | silence | fully right | made / broken vs first "
             "| distractors injected (prompts) | whisper CPU per call p50 / p95 ms |",
             "|---:|---:|---|---|---|---:|---|---|---|"]
    for path, run in zip(paths, runs):
        r = row(prompts, run, runs[0])
        cpu = "-" if run["cpu"] is None else (f"{run['cpu']['p50']:.1f} / {run['cpu']['p95']:.1f} "
                                              f"({run['cpu']['calls']} calls)")
        label = path.stem if run["n"] is None else f"{run['n']}{' outdated' if run['outdated'] else ''}"
        lines.append(f"| {label} | {r['prompts']} "
                     f"| {_ratio(r['hits'], r['inject'])} | {_ratio(r['correct'], r['injected'])} "
                     f"| {_ratio(r['silent_ok'], r['silent'])} | {r['right']} | +{r['made']} / -{r['broken']} "
                     f"(net {r['made'] - r['broken']:+d}) | {r['distractors']} of {r['injected']} "
                     f"({r['with_distractor']}) "
                     f"| {cpu} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("show", "table"))
    parser.add_argument("runs", nargs="*", type=Path, help="table: show files, the first the reference (N = 0)")
    parser.add_argument("--n", type=int, default=0, help="show: how many distractors")
    parser.add_argument("--outdated", action="store_true",
                        help="show: the distractors marked outdated (out of recall's hits, still in its statistics)")
    args = parser.parse_args(argv)
    if args.what == "table":
        if not args.runs:
            parser.error("table needs at least one show file")
        print("\n".join(table(args.runs)))
        return 0
    from bench.whisper_ret import count_cpu, cpu_line
    from bench.whisper_stores import main as stores_main

    install(args.n, outdated=args.outdated)
    spent = count_cpu()
    print(f"# distractors {args.n}{' outdated' if args.outdated else ''}")
    code = stores_main(["--split", "dev", "--show"])
    line = cpu_line(spent)
    print(f"# {line}")
    print(line, file=sys.stderr)
    if spent:
        print(f"# whisper CPU total {sum(spent):.1f} s, mean {1000 * statistics.fmean(spent):.2f} ms", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
