"""Read bench.whisper_rules_audit's output: what each rule adds, per group of batches (session 21, audit2).

    python -m bench.whisper_rules_audit_report OUT.json [--ids]

A rule's fresh batches are the dev batches among 6-12 that no run could read when the rule's first commit (the hash
in the variant's name) landed on main: those whose first commit (`git log -S` on bench/datasets/whisper.json) landed
after it, and those sealed then (bench/datasets/loader.SEALED_BATCHES: batch 10 from 02:50 to 06:53, batch 11
from 07:05 to 09:45 and batch 12 from 09:58 to 12:24 on 29 Nov); landing is the committer date (a batch's author date
precedes its landing: batch 6 was written at 03:25 and reached main at 04:35, after session 14's rules). Batch 13
(session 22) is fresh for every rule, column (b); the others (1-12 less the fresh) are the batches it was tuned on.
"What the rule adds" is base minus the variant: +hits, wrong memories whispered (+ means the rule whispers more
wrong ones), broken silences. `--ids` names the changed prompts of batches 1-12 (never batch 13's; session 21 read
the same with batch 12 as column (b)).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from datetime import datetime

BATCH_LANDED = {6: "2026-11-28T04:35:05", 7: "2026-11-28T13:55:12", 8: "2026-11-28T18:21:51",
                9: "2026-11-28T23:34:12", 10: "2026-11-29T02:47:30", 11: "2026-11-29T07:05:31",
                12: "2026-11-29T09:58:34"}  # committer dates
SEALED = {10: ("2026-11-29T02:50:49", "2026-11-29T06:53:39"), 11: ("2026-11-29T07:05:31", "2026-11-29T09:45:43"),
          12: ("2026-11-29T09:58:34", "2026-11-29T12:24:38")}
FRESH = 13  # session 22: batch 13 is fresh for every rule; batch 12 is fresh for every rule of sessions 14-20
RENAMED = {"s14 request: no ordinary word (14)": "s14 request: no ordinary word (d7f6f57)",
           "s14 request: greetings closed (14)": "s14 request: greetings closed (bd93e47)"}  # the first run's names


def landed(commit: str) -> datetime:
    out = subprocess.run(["git", "log", "-1", "--format=%cI", commit], capture_output=True, text=True, check=True)
    return datetime.fromisoformat(out.stdout.strip()).replace(tzinfo=None)


def fresh_batches(name: str) -> list[int]:
    commit = re.search(r"\(([0-9a-f]{7})\)", name)
    if commit is None:
        return []
    when = landed(commit.group(1))
    sealed = {b for b, (start, end) in SEALED.items()
              if datetime.fromisoformat(start) <= when < datetime.fromisoformat(end)}
    return [b for b, at in BATCH_LANDED.items() if datetime.fromisoformat(at) > when or b in sealed]


def adds(base: dict, var: dict, batches) -> tuple[int, int, int, list[str]]:
    hits = wrong = broken = 0
    changed = []
    for pid, b in base.items():
        if b["batch"] not in batches:
            continue
        v = var[pid]
        hits += b["hit"] - v["hit"]
        wrong += b["wrong"] - v["wrong"]
        broken += b["broken"] - v["broken"]
        if (b["hit"], b["wrong"], b["broken"], b["injected"]) != (v["hit"], v["wrong"], v["broken"], v["injected"]):
            changed.append(pid)
    return hits, wrong, broken, changed


def fmt(t) -> str:
    h, w, b, ch = t
    if not ch:
        return "nothing"
    parts = [f"{x:+d} {name}" for x, name in ((h, "hit"), (w, "wrong"), (b, "broken")) if x]
    return (", ".join(parts) or "same counts") + f" ({len(ch)} changed)"


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    data = json.loads(open(argv[0]).read())
    show_ids = "--ids" in argv
    data = {RENAMED.get(k, k): v for k, v in data.items()}
    base = data["base"]
    again = data.get("base again")
    if again is not None:
        print("base vs base again:", fmt(adds(base, again, range(1, FRESH + 1))))
    for name, var in data.items():
        if name.startswith("base"):
            continue
        fresh = fresh_batches(name)
        tuned = [b for b in range(1, FRESH) if b not in fresh]
        a, b12, c = adds(base, var, fresh), adds(base, var, [FRESH]), adds(base, var, tuned)
        span = "none" if not fresh else str(fresh[0]) if len(fresh) == 1 else f"{fresh[0]}-{fresh[-1]}"
        line = f"{name} | (a) {span}: {fmt(a)} | (b) {FRESH}: {fmt(b12)}"
        line += f" | (c) tuned: {fmt(c)}"
        print(line)
        if show_ids:
            print("    fresh changed:", a[3], " tuned changed:", c[3])
    return 0


if __name__ == "__main__":
    sys.exit(main())
