"""Owner agreement on the labelled stores (session 27, whose17; issue 11): does the memory name WHOSE thing the
prompt asks about (whisper.owner)?

    python -m bench.whisper_stores --split dev --show > RUN.txt   # one full dev run, every prompt's outcome
    python -m bench.whisper_whose owners                          # the dev prompts naming an owner, and the owner
    python -m bench.whisper_whose screen RUN.txt                  # whisper.owner's check on that run's injections
    python -m bench.whisper_whose expected                        # the dev answers the check would drop
    python -m bench.whisper_whose cpu                             # CPU per call of asked_owners and missing_owner

Only the dev prompts a fit may read (bench.whisper_silence.dev_prompts: the held-out batch,
bench.whisper_gate_fit.FRESH_BATCHES, and the sealed ones are left out before anything is read).

`screen` (design, not a decision: the full dev run decides): each prompt's injected memories in a `--show` run less
those whose text (title, content, tags, space) misses an owner the prompt asks about (`whisper.owner.missing_owner`);
made / broken / net by batch and by store. `expected`: the expected and accepted memories of the dev inject prompts
that the check would drop, each checked directly, whether or not today's run injects them.
"""

from __future__ import annotations

import argparse
import ast
import sys
import time
from collections import Counter
from pathlib import Path


def _memories() -> dict[str, dict]:
    from bench.datasets.loader import merged_memories

    return {m["key"]: m for m in merged_memories()[0]}


def memory_text(m: dict) -> str:
    """What the check reads of a memory: title, content and labels (tags and space), as the focus stage does."""
    labels = " ".join((*m.get("tags", ()), m.get("space") or ""))
    return f"{m['title']}\n{m['content']}\n{labels}"


def read_show(path: str) -> dict[str, list[str]]:
    """A `--show` run's dev lines: prompt id -> injected keys."""
    out = {}
    for line in Path(path).read_text().splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[0] != "dev" or "[" not in line:
            continue
        out[parts[1]] = ast.literal_eval(line[line.index("["):line.index("]") + 1])
    return out


def owners() -> list[str]:
    from bench.whisper_silence import dev_prompts
    from whisper.owner import asked_owners

    lines, count = [], Counter()
    for p in dev_prompts().values():
        found = asked_owners(p["prompt"])
        if found:
            count[p["kind"]] += 1
            lines.append(f"{p['id']} ({p['kind']}) {found} {p['prompt'][:110]!r}")
    lines.append(f"{sum(count.values())} dev prompts name an owner: {dict(count)}")
    return lines


def screen(path: str) -> list[str]:
    from bench.prompt_groups import group_of
    from bench.whisper_near import fully_right
    from bench.whisper_silence import dev_prompts
    from whisper.owner import missing_owner

    prompts, mems, run = dev_prompts(), _memories(), read_show(path)
    lines, net = [], Counter()
    for pid, injected in run.items():
        p = prompts.get(pid)
        if p is None:
            continue
        after = [k for k in injected if missing_owner(p["prompt"], memory_text(mems[k])) is None]
        if after == injected:
            continue
        was, now = fully_right(p, injected), fully_right(p, after)
        change = "made" if now and not was else "broken" if was and not now else "same"
        net[change] += 1
        net["batch " + group_of(p, "batch")] += (change == "made") - (change == "broken")
        net[group_of(p, "store")] += (change == "made") - (change == "broken")
        lines.append(f"{change:6} {pid} ({p['kind']}) {p['prompt'][:100]!r} {injected} -> {after}")
    lines.append(f"made {net['made']}, broken {net['broken']}, same {net['same']}: net {net['made'] - net['broken']:+d}")
    lines.append("  " + ", ".join(f"{k} {v:+d}" for k, v in sorted(net.items()) if k not in ("made", "broken", "same")))
    return lines


def expected() -> list[str]:
    from bench.whisper_silence import dev_prompts
    from whisper.owner import missing_owner

    mems = _memories()
    lines, judged = [], 0
    for p in dev_prompts().values():
        if p["kind"] != "inject":
            continue
        for key in (*p.get("expect", ()), *p.get("accept", ())):
            if key not in mems:
                continue
            judged += 1
            owner = missing_owner(p["prompt"], memory_text(mems[key]))
            if owner is not None:
                lines.append(f"{p['id']} {key} owner {owner!r}: {p['prompt'][:100]!r} / {mems[key]['title']!r}")
    lines.append(f"{len(lines)} of {judged} expected or accepted memories of dev inject prompts dropped")
    return lines


def cpu() -> list[str]:
    from bench.whisper_silence import dev_prompts
    from whisper.owner import asked_owners, missing_owner

    prompts = [p["prompt"] for p in dev_prompts().values()]
    text = memory_text(next(iter(_memories().values())))
    start = time.process_time()
    for prompt in prompts:
        asked_owners(prompt)
    per_prompt = (time.process_time() - start) / len(prompts)
    start = time.process_time()
    for prompt in prompts:
        missing_owner(prompt, text)
    per_memory = (time.process_time() - start) / len(prompts)
    return [f"asked_owners {per_prompt * 1e6:.0f} us a prompt, missing_owner {per_memory * 1e6:.0f} us a memory "
            f"(process CPU, {len(prompts)} dev prompts)"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench.whisper_whose", description=__doc__.split("\n")[0])
    parser.add_argument("what", choices=("owners", "screen", "expected", "cpu"))
    parser.add_argument("run", nargs="?", help="a --show run (screen)")
    args = parser.parse_args(argv)
    if args.what == "screen" and not args.run:
        parser.error("screen needs a --show run")
    lines = {"owners": owners, "expected": expected, "cpu": cpu}.get(args.what, lambda: screen(args.run))()
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
