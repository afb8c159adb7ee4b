"""Screen of an early-exit rule on the dev prompts (session 26, near3; issue 11): which prompts a rule would silence at
stage 1 and what that does to their outcome in a base run.

    python -m bench.whisper_routes --split dev --json ROUTES   # one full dev run of main, every prompt's outcome
    python -m bench.whisper_output screen ROUTES               # prompts whisper.output_lines would silence

An early exit only silences, so the screen is exact for the prompts it names: a silent prompt that got a memory is
made, an inject prompt that was right is broken (the full run decides all the same). Dev batches only: the held-out
batch (bench.whisper_gate_fit.FRESH_BATCHES) and the sealed ones are left out before anything is read.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


def screen(records: list[dict]) -> list[str]:
    from bench.prompt_groups import group_of
    from bench.whisper_near import fully_right
    from bench.whisper_silence import dev_prompts
    from whisper.output_lines import is_output_alone
    from whisper.pasted import is_pasted_output

    prompts = dev_prompts()
    lines, net = [], Counter()
    for r in records:
        p = prompts.get(r["id"])
        if p is None or is_pasted_output(p["prompt"]) or not is_output_alone(p["prompt"]):
            continue
        before, after = fully_right(p, r["injected"]), fully_right(p, [])
        change = "made" if after and not before else "broken" if before and not after else "same"
        net[change] += 1
        for by in ("batch", "store"):
            net[by, str(group_of(p, by))] += (change == "made") - (change == "broken")
        lines.append(f"{change:6} {p['id']} ({p['kind']}, {p['category']}) {p['prompt'][:100]!r}")
    lines.append(f"made {net['made']}, broken {net['broken']}, same {net['same']}: net {net['made'] - net['broken']:+d}")
    for by in ("batch", "store"):
        lines.append(f"  by {by}: " + ", ".join(f"{g} {v:+d}" for (b, g), v in sorted(
            (k, v) for k, v in net.items() if isinstance(k, tuple)) if b == by))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("screen",))
    parser.add_argument("routes", type=Path, help="the --json output of bench.whisper_routes (dev)")
    args = parser.parse_args(argv)
    print("\n".join(screen(json.loads(args.routes.read_text()))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
