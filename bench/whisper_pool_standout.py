"""Replay study (session 19): a memory that stands out for the prompt over the whole scope, added after the gate.

    python -m bench.whisper_pool_standout --dump /tmp/standout.json     # runs the dev prompts once, writes the dump
    python -m bench.whisper_pool_standout --replay /tmp/standout.json   # the rule's figures per threshold

The run is bench.whisper_pool's (production whisper, dev split, same stores, clock and sessions); per prompt's last
call it records the prompt's cosine to every stored memory (whole-memory vectors, as the vector matrix holds them)
and keeps the nearest TOP with their standard score z = (cosine - mean) / spread over all of them, their space and
type, whether each was in whisper's pool and whether whisper injected it. The replay adds, to what whisper
injected, the nearest memory of the scope (the prompt's project, global memories, or any space: `--spaces`) when
its z reaches T and whisper did not inject it; it prints dev fit batches hit / precision / silence per T and the choice
left out by batch (T chosen on the other eight: the highest hit rate whose precision and silence are not below
today's on those eight, a tie to the higher T). FRESH_BATCHES are left out of every choice and printed apart,
aggregates only. Never the test split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES

TOP = 5
GRID = (3.5, 4.0, 4.5, 5.0, 5.5, 6.0, 99.0)


def dump(path: Path) -> None:
    import numpy as np

    from bench.whisper_pool import recording_pool
    from bench.whisper_quality import setup_django
    from bench.whisper_stores import EMBEDDER, run_one, seed_stores

    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-standout-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        from bench.datasets.loader import merged_memories

        meta = {m["key"]: (m.get("space"), m.get("type")) for m in merged_memories()[0]}
        rows = []
        with recording_pool(ids, top=TOP) as calls:
            for p in scenarios.prompts_in("dev"):
                calls.clear()
                o = run_one(p, ids, now=scenarios.now)
                last = calls[-1] if calls else None
                rows.append({"id": p["id"], "batch": p.get("batch", 1), "category": p["category"],
                             "kind": p["kind"], "expect": p.get("expect", []), "accept": p.get("accept", []),
                             "injected": o.injected, "served_before": o.served_before,
                             "space": p.get("space"), "target": last and last["target"],
                             "top": [dict(t, space=meta.get(t["key"], (None, None))[0],
                                          type=meta.get(t["key"], (None, None))[1],
                                          pool=t["key"] in last["pool"]) for t in (last["top"] if last else [])]})
        path.write_text(json.dumps(rows))
        del np


def cpu(overlap_z: float | None, out: Path | None) -> None:
    """Every dev prompt through production whisper, the CPU of each whisper call (its stages, time.process_time)
    summed; `overlap_z` overrides conf.overlap_z (inf: the standing pass off). Prints the figures of dev fit batches and of
    the fresh batch apart, CPU per call, and how many calls read the scope's spread; `out` gets id -> injected."""
    import time
    from dataclasses import replace

    from bench.whisper_quality import setup_django
    from bench.whisper_stores import EMBEDDER, metrics, run_one, seed_stores

    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-standout-cpu-") as tmp:
        setup_django(Path(tmp))
        from django.conf import settings

        import whisper.services.respond as respond

        if overlap_z is not None:
            settings.ORMAH["WHISPER_OVERLAP_Z"] = overlap_z
        ids, scenarios = seed_stores()
        spent, reads = [], [0]
        original = respond.run_stages

        def run_stages(run, conf, deps, *a):
            reading = deps.spread

            def counted(vec):
                reads[0] += 1
                return reading(vec)
            deps = replace(deps, spread=counted)
            t0 = time.process_time()
            try:
                return original(run, conf, deps, *a)
            finally:
                spent.append(time.process_time() - t0)

        respond.run_stages = run_stages
        try:
            outcomes = [run_one(p, ids, now=scenarios.now) for p in scenarios.prompts_in("dev")]
        finally:
            respond.run_stages = original
        for name, group in (("dev fit batches", [o for o in outcomes if o.prompt.get("batch", 1) not in FRESH_BATCHES]),
                            ("fresh batch dev", [o for o in outcomes if o.prompt.get("batch", 1) in FRESH_BATCHES])):
            m = metrics(group)
            print(f"{name}: {m['hit_rate']:.3f} ({m['hits']}/{m['inject']}) / {m['precision']:.3f} "
                  f"({m['correct']}/{m['injected']}) / {m['silence']:.3f} ({m['silent_ok']}/{m['silent']})")
        print(f"{len(spent)} whisper calls, {1000 * sum(spent) / len(spent):.2f} ms CPU each (mean), "
              f"{sum(spent):.1f} s in all; the scope's spread read in {reads[0]} calls")
        if out:
            out.write_text(json.dumps({o.prompt["id"]: o.injected for o in outcomes}))


def added(row: dict, t: float, spaces: str) -> str | None:
    """The memory the rule adds to this prompt's injection, or None."""
    for top in row["top"]:
        if spaces == "scope" and top["space"] not in (row["target"], None):
            continue
        if top["z"] < t:
            return None
        return None if top["key"] in row["injected"] else top["key"]
    return None


def figures(rows: list[dict], t: float, spaces: str) -> tuple[int, int, int, int, int, int]:
    hits = inject = correct = injected = silent_ok = silent = 0
    for r in rows:
        extra = added(r, t, spaces)
        got = list(r["injected"]) + ([extra] if extra else [])
        good = set(r["expect"]) | set(r["accept"])
        injected += len(got)
        correct += sum(k in good for k in got)
        if r["kind"] == "silent":
            silent += 1
            silent_ok += not got
        else:
            inject += 1
            hits += bool(set(r["expect"]) & (set(got) | set(r["served_before"])))
    return hits, inject, correct, injected, silent_ok, silent


def line(f) -> str:
    h, n, c, i, s, m = f
    return f"{h / n:.3f} ({h}/{n}) / {c / max(i, 1):.3f} ({c}/{i}) / {s / max(m, 1):.3f} ({s}/{m})"


def replay(path: Path, spaces: str) -> None:
    rows = json.loads(path.read_text())
    dev = [r for r in rows if r["batch"] not in FRESH_BATCHES]
    fresh = [r for r in rows if r["batch"] in FRESH_BATCHES]
    print(f"spaces={spaces}; today (no rule): dev fit batches {line(figures(dev, 99.0, spaces))}; "
          f"fresh batch dev {line(figures(fresh, 99.0, spaces))}")
    for t in GRID[:-1]:
        gained = sorted(r["id"] for r in dev if (x := added(r, t, spaces)) and x in r["expect"]
                        and not set(r["expect"]) & (set(r["injected"]) | set(r["served_before"])))
        print(f"  z >= {t}: dev fit batches {line(figures(dev, t, spaces))}  gained {gained}")
    base = {b: figures([r for r in dev if r["batch"] == b], 99.0, spaces) for b in {r["batch"] for r in dev}}
    total = [0] * 6
    for b in sorted(base):
        rest = [r for r in dev if r["batch"] != b]
        ref = figures(rest, 99.0, spaces)
        best = 99.0
        for t in sorted(GRID, reverse=True):
            f = figures(rest, t, spaces)
            ok = f[2] * ref[3] >= ref[2] * f[3] and f[4] >= ref[4]
            if ok and f[0] > figures(rest, best, spaces)[0]:
                best = t
        f = figures([r for r in dev if r["batch"] == b], best, spaces)
        total = [a + v for a, v in zip(total, f)]
        print(f"  left out batch {b}: T {best} -> {line(f)} (today {line(base[b])})")
    print(f"  left out by batch, dev fit batches: {line(total)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--replay", type=Path)
    parser.add_argument("--spaces", choices=("scope", "any"), default="scope")
    parser.add_argument("--cpu", action="store_true", help="CPU per whisper call and the figures, production whisper")
    parser.add_argument("--overlap-z", type=float, help="with --cpu: conf.overlap_z (inf: the standing pass off)")
    parser.add_argument("--outcomes", type=Path, help="with --cpu: write id -> injected keys (JSON)")
    args = parser.parse_args(argv)
    if args.dump:
        dump(args.dump)
    if args.cpu:
        cpu(args.overlap_z, args.outcomes)
    if args.replay:
        replay(args.replay, args.spaces)
    return 0


if __name__ == "__main__":
    sys.exit(main())
