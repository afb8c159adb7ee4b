"""Where whisper's wrong memories and broken silences come from (session 24, silence2; issue 11).

    python -m bench.whisper_routes --split dev --json ROUTES      # one full dev run with every gate row recorded
    python -m bench.whisper_silence table ROUTES                  # the tables below, dev batches only
    python -m bench.whisper_silence split 4.5=A.txt 4.0=B.txt ... # standout z apart for tasks and first person

Reads the records bench.whisper_routes writes (each prompt's injected memories and the route the gate passed each
by) and counts, over the dev prompts of every batch not held out (bench.whisper_gate_fit.FRESH_BATCHES) or sealed
(bench.datasets.loader.SEALED_BATCHES), every wrong memory injected: by the route that let it through, whether it
came on a prompt that should be silent (a broken silence) or beside the right memory or instead of it, by
category and by store (bench.prompt_groups.group_of). The standout route is split by what the prompt is: a task a
convention could govern (`whisper.conventions.governs_task`) or a first-person prompt off the identity route
(session 23's change B). A memory passed by the standing of a hit sharing no word (`overlap_z`) or that the
recording does not place is "other". Nothing here reads the held-out batch's prompts.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

DATASET = Path(__file__).parent / "datasets" / "whisper.json"


def dev_prompts() -> dict[str, dict]:
    """The dev prompts a fit may read: sealed and held-out batches left out before anything else is looked at."""
    from bench.datasets.loader import SEALED_BATCHES
    from bench.whisper_gate_fit import FRESH_BATCHES

    data = json.loads(DATASET.read_text())
    kept = [p for p in data["prompts"] if p.get("batch", 1) not in SEALED_BATCHES]
    return {p["id"]: p for p in kept if p.get("batch", 1) not in FRESH_BATCHES and p["split"] == "dev"}


def route_of(record: dict, key: str) -> str:
    """The route that passed one injected memory, the standout split by task or first person."""
    from whisper.conventions import governs_task

    rows = {row["key"]: row for row in (record["gate"] or {}).get("rows", []) if row["passed"]}
    route = rows.get(key, {}).get("route", "other")
    if route == "standout":
        return "standout (task)" if governs_task(record["prompt"]) else "standout (first person)"
    return route


def wrong_memories(records: list[dict], prompts: dict[str, dict]) -> list[dict]:
    """One row per wrong memory injected on a dev prompt: prompt id, batch, category, store, route, and its place:
    "silent" (a prompt that should be silent), "beside" (the right memory injected too) or "instead"."""
    from bench.prompt_groups import group_of

    out = []
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        right = bool(set(r["injected"]) & good)
        for key in r["injected"]:
            if key in good:
                continue
            place = "silent" if p["kind"] == "silent" else ("beside" if right else "instead")
            out.append({"id": p["id"], "batch": p.get("batch", 1), "category": p["category"],
                        "store": group_of(p, "store"), "route": route_of(r, key), "place": place, "key": key})
    return out


def right_memories(records: list[dict], prompts: dict[str, dict]) -> Counter:
    """Right memories injected per route (for each route's precision)."""
    out: Counter = Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        for key in r["injected"]:
            if key in good:
                out[route_of(r, key)] += 1
    return out


def standouts_beside(records: list[dict], prompts: dict[str, dict]) -> Counter:
    """Standout-passed memories on prompts where a memory another route passed was injected too, right and wrong
    (what a standout adds beside the gate's answer: session 24's fallback rule reads this)."""
    out: Counter = Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None:
            continue
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        routes = {key: route_of(r, key) for key in r["injected"]}
        if all(v.startswith("standout") for v in routes.values()):
            continue
        for key, route in routes.items():
            if route.startswith("standout"):
                out[route, "right" if key in good else "wrong"] += 1
    return out


def _table(rows: list[dict], by: str, right: Counter | None = None) -> list[str]:
    counts: dict[str, Counter] = defaultdict(Counter)
    for row in rows:
        counts[row[by]][row["place"]] += 1
    head = f"| {by} | silent prompt | beside the right one | instead of it | wrong, all |"
    lines = [head + (" right | precision |" if right is not None else ""),
             "|---|---:|---:|---:|---:|" + ("---:|---:|" if right is not None else "")]
    for name in sorted(counts, key=lambda n: -sum(counts[n].values())):
        c = counts[name]
        total = sum(c.values())
        cells = f"| {name} | {c['silent']} | {c['beside']} | {c['instead']} | {total} |"
        if right is not None:
            ok = right.get(name, 0)
            cells += f" {ok} | {ok / (ok + total):.2f} |"
        lines.append(cells)
    total = Counter(row["place"] for row in rows)
    lines.append(f"| all | {total['silent']} | {total['beside']} | {total['instead']} | {len(rows)} |"
                 + (f" {sum(right.values())} | {sum(right.values()) / (sum(right.values()) + len(rows)):.2f} |"
                    if right is not None else ""))
    return lines


def _cross(rows: list[dict], a: str, b: str) -> list[str]:
    counts = Counter((row[a], row[b]) for row in rows)
    cols = sorted({row[b] for row in rows})
    lines = [f"| {a} \\ {b} | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name in sorted({row[a] for row in rows}, key=lambda n: -sum(v for (x, _), v in counts.items() if x == n)):
        lines.append(f"| {name} | " + " | ".join(str(counts[name, c]) for c in cols) + " |")
    return lines


def table(records: list[dict]) -> list[str]:
    prompts = dev_prompts()
    rows = wrong_memories(records, prompts)
    right = right_memories(records, prompts)
    silent = [p for p in prompts.values() if p["kind"] == "silent"]
    ran = {r["id"] for r in records}
    broken = {row["id"] for row in rows if row["place"] == "silent"}
    lines = [f"dev prompts read: {len(ran & set(prompts))}; silent {sum(p['id'] in ran for p in silent)}, "
             f"broken silences {len(broken)}; wrong memories {len(rows)}", "", "by route:", *_table(rows, "route", right),
             "", "by category:", *_table(rows, "category"), "", "by store:", *_table(rows, "store"),
             "", "route by store:", *_cross(rows, "route", "store"),
             "", "route by category:", *_cross(rows, "route", "category"), "",
             "standouts beside a memory another route passed (right / wrong):"]
    beside = standouts_beside(records, prompts)
    for route in sorted({k for k, _ in beside}):
        lines.append(f"  {route}: {beside[route, 'right']} / {beside[route, 'wrong']}")
    return lines


def prompt_type(prompt: str) -> str:
    """Which standout threshold a prompt's standouts would face under a split: "task" when a convention could govern
    it (`governs_task`, as whisper.conventions.standouts reads it first), else "first person"."""
    from whisper.conventions import governs_task

    return "task" if governs_task(prompt) else "first person"


def left_out(right: dict[str, list[bool]], prompts: list[dict], today: str, by: str) -> tuple[int, list[str]]:
    """Each group (batch or store) scored with the setting that is best on the other groups (ties to today's, then
    to the earlier setting), summed; `right` maps a setting to each prompt's fully-right flag."""
    from bench.prompt_groups import group_of

    names = list(right)
    groups = [group_of(p, by) for p in prompts]
    total, lines = 0, []
    for g in sorted(set(groups), key=lambda g: (len(g), g)):
        def score(name, inside, g=g):
            return sum(ok for ok, gg in zip(right[name], groups) if (gg == g) == inside)
        best = max(names, key=lambda n: (score(n, False), n == today, -names.index(n)))
        total += score(best, True)
        lines.append(f"  {g}: {best} {score(best, True)} against {score(today, True)}")
    return total, lines


def split(runs: dict[str, Path], today: str) -> list[str]:
    """Full dev `--show` runs, one per standout z (name -> file): every pair (z for tasks, z for first-person
    prompts) scored prompt by prompt from the run at its type's z, chosen leave-one-batch-out and leave-one-store-out
    against today's pair (today, today)."""
    from bench.whisper_identity import _dev_prompts, _right
    from bench.whisper_show_report import read_show

    prompts = _dev_prompts()
    shows = {z: read_show(f) for z, f in runs.items()}
    types = [prompt_type(p["prompt"]) for p in prompts]
    right = {}
    for zt in runs:
        for zf in runs:
            pick = [shows[zt if t == "task" else zf] for t in types]
            right[f"task {zt} / first person {zf}"] = [bool(_right(p, run)) for p, run in zip(prompts, pick)]
    base = f"task {today} / first person {today}"
    lines = [f"prompts {len(prompts)} (task {types.count('task')}); in sample:"]
    lines += [f"  {name}: {sum(flags)}" for name, flags in right.items()]
    for by in ("batch", "store"):
        total, per = left_out(right, prompts, base, by)
        lines.append(f"left out by {by}: {total} against {sum(right[base])} (net {total - sum(right[base]):+d})")
        lines += per
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table", "split"))
    parser.add_argument("files", nargs="+", help="table: the --json output of bench.whisper_routes (dev); split: "
                        "Z=SHOW.txt for each z's full dev --show run, today's first")
    args = parser.parse_args(argv)
    if args.what == "table":
        print("\n".join(table(json.loads(Path(args.files[0]).read_text()))))
        return 0
    runs = {z: Path(f) for z, f in (item.split("=", 1) for item in args.files)}
    print("\n".join(split(runs, next(iter(runs)))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
