"""The identity and preference routes' cosine gates refitted on a dev gate dump, left out by labelling batch (issue 11).

    python -m bench.whisper_routes_fit DUMP [--grid]

DUMP is what `python -m bench.whisper_stores --split dev --gate-dump DUMP` wrote. The dump is replayed as
bench/whisper_gate_fit.py replays it (today's logistic weights and threshold, the identity route's "best identity
memories only" share, the focus stage's drops, already served, the cap of 2), with the route gates of
whisper/conf.py swapped for each setting of the grid: the identity gate with and without a shared word, the
preference gate with and without one, and the share of the best route score a fact question keeps
(`identity_fact_share`). A setting's worth on a set of prompts is hits + silent prompts kept silent - wrong
memories injected (a wrong memory on a silent prompt costs twice: the silence and the memory).

Left out by batch: for each dev batch 1-10, the setting with the highest worth on the other nine (a tie: the one
nearest today's values) is scored on that batch; the sums over the ten are the estimate of what a refit gains on
prompts it was not chosen on. Held-out batches (whisper_gate_fit.FRESH_BATCHES) are dropped by
whisper_gate_fit.prepared; sealed batches are never in a dump (the loader never runs them).
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections import defaultdict

import numpy as np

import bench.whisper_gate_fit as fit

ROUTES = ("identity", "preference")
NAMES = ("identity_gate", "identity_gate_no_word", "preference_gate", "preference_gate_no_word", "identity_fact_share")
GRID = {
    "identity_gate": (0.20, 0.225, 0.25, 0.275, 0.30, 0.325, 0.35),
    "identity_gate_no_word": (0.25, 0.30, 0.35, 0.40, 0.45),
    "preference_gate": (0.25, 0.275, 0.30, 0.325, 0.35, 0.375, 0.40),
    "preference_gate_no_word": (0.30, 0.35, 0.40, 0.45, 0.50),
    "identity_fact_share": (0.8, 0.85, 0.9, 0.95, 1.0),
}


def today() -> tuple[float, ...]:
    from whisper.conf import WhisperConf

    d = WhisperConf()
    gone = {"preference_gate": 0.35, "preference_gate_no_word": 0.45}  # whisper's preference gate went in session 22
    return tuple(getattr(d, n) if n not in gone else gone[n] for n in NAMES)


def counts(dump: list[dict], logits: dict, setting: tuple[float, ...], *, t: float, dumped_share: float
           ) -> dict[int, list[int]]:
    """Per batch: [hits, inject prompts, silent kept, silent prompts, right memories, injected memories] with the
    route gates of `setting` at logistic threshold t (bench.whisper_gate_fit.passed, its module's route gates
    swapped for the call and put back). A candidate dumped with share `dumped_share` (identity_fact_share: a fact
    question the text rule found, or a preference task) takes the setting's share; the identity intent's share
    (gate_relative) stays."""
    saved = fit.IDENTITY_GATE, fit.IDENTITY_GATE_NO_WORD, fit.PREFERENCE_GATE, fit.PREFERENCE_GATE_NO_WORD
    fit.IDENTITY_GATE, fit.IDENTITY_GATE_NO_WORD, fit.PREFERENCE_GATE, fit.PREFERENCE_GATE_NO_WORD, share = setting
    out: dict[int, list[int]] = defaultdict(lambda: [0] * 6)
    try:
        for pi, item in enumerate(dump):
            p, calls = item["prompt"], item["calls"]
            texts = list(p.get("history", ())) + [p["prompt"]]
            served: set[str] = set()
            got: list[str] = []
            for ci, call in enumerate(calls):
                for c in call or ():
                    if c.get("share") == dumped_share or c.get("fact_share"):
                        c["fact_share"], c["share"] = True, share
                lg = {k: logits.get((pi, ci, k), -99.0) for k in range(len(call or ()))}
                if ci < len(calls) - 1:
                    served |= set(fit.passed(call or [], lg, t, prompt=texts[ci]))
                else:
                    got = fit.passed(call or [], lg, t, frozenset(served), texts[-1])
            good = set(p.get("expect", [])) | set(p.get("accept", []))
            row = out[p.get("batch", 1)]
            row[4] += sum(k in good for k in got)
            row[5] += len(got)
            if p["kind"] == "inject":
                row[0] += bool(set(p["expect"]) & (set(got) | served))
                row[1] += 1
            else:
                row[2] += not got
                row[3] += 1
    finally:
        fit.IDENTITY_GATE, fit.IDENTITY_GATE_NO_WORD, fit.PREFERENCE_GATE, fit.PREFERENCE_GATE_NO_WORD = saved
    return out


def worth(rows: list[list[int]]) -> int:
    return sum(r[0] + r[2] - (r[5] - r[4]) for r in rows)


def left_out(table: dict[tuple, dict[int, list[int]]], base: tuple[float, ...]) -> dict[int, tuple]:
    """Per batch, the setting with the highest worth on the other batches (a tie: the one nearest `base`)."""
    batches = sorted(next(iter(table.values())))

    def distance(s: tuple[float, ...]) -> float:
        return sum(abs(a - b) for a, b in zip(s, base))

    return {b: min(table, key=lambda s: (-worth(table[s][o] for o in batches if o != b), distance(s)))
            for b in batches}


def figures(rows: list[list[int]]) -> str:
    h, n, s, m, c, i = (sum(r[j] for r in rows) for j in range(6))
    return f"{h / n:.3f} ({h}/{n}) / {c / i:.3f} ({c}/{i}) / {s / m:.3f} ({s}/{m})"


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", help="the file bench.whisper_stores --split dev --gate-dump wrote")
    parser.add_argument("--grid", action="store_true", help="print the ten best settings on all ten batches")
    args = parser.parse_args(argv)
    dump = fit.prepared(json.loads(open(args.dump).read()), open_overlap=False)
    dump = [item for item in dump if item["prompt"].get("split") == "dev"]
    x, _, where = fit.rows(dump)
    held = np.array(GATE_WEIGHTS[1:] + (0.0,) * (x.shape[1] + 1 - len(GATE_WEIGHTS)))
    logits = {k: float(GATE_WEIGHTS[0] + x[j] @ held) for j, k in enumerate(where)}
    base = today()
    # Only prompts with a route candidate in some call change with the setting; the rest are counted once.
    routed = [i for i, item in enumerate(dump)
              if any(c["route"] in ROUTES for call in item["calls"] for c in call or ())]
    sub = [dump[i] for i in routed]
    sub_logits = {(pi, ci, k): logits[(i, ci, k)] for pi, i in enumerate(routed)
                  for ci, call in enumerate(dump[i]["calls"]) for k in range(len(call or ())) if (i, ci, k) in logits}
    whole = counts(dump, logits, base, t=GATE_LOGIT, dumped_share=base[-1])
    part = counts(sub, sub_logits, base, t=GATE_LOGIT, dumped_share=base[-1])
    fixed = {b: [w - p for w, p in zip(whole[b], part[b])] for b in whole}
    batches = sorted({item["prompt"].get("batch", 1) for item in dump})
    table = {}
    for setting in itertools.product(*(GRID[n] for n in NAMES)):
        got = counts(sub, sub_logits, setting, t=GATE_LOGIT, dumped_share=base[-1])
        table[setting] = {b: [f + g for f, g in zip(fixed[b], got[b])] for b in batches}

    print(f"{len(dump)} dev prompts of batches {batches[0]}-{batches[-1]}, {len(routed)} with a route candidate; "
          f"{len(table)} settings ({', '.join(NAMES)})")
    print(f"today {base}: " + figures([table[base][b] for b in batches]) + f", worth {worth(table[base].values())}")
    best_all = sorted(table, key=lambda s: (-worth(table[s].values()), sum(abs(a - b) for a, b in zip(s, base))))
    print(f"best on all ten {best_all[0]}: " + figures(list(table[best_all[0]].values()))
          + f", worth {worth(table[best_all[0]].values())}")
    if args.grid:
        for s in best_all[:10]:
            print(f"  {s}: {figures(list(table[s].values()))}, worth {worth(table[s].values())}")
    chosen = left_out(table, base)
    left, today_rows = [table[chosen[b]][b] for b in batches], [table[base][b] for b in batches]
    for b in batches:
        print(f"  batch {b:2}: chosen on the others {chosen[b]}: {figures([table[chosen[b]][b]])} "
              f"(today {figures([table[base][b]])})")
    print("left out by batch, summed: " + figures(left) + f", worth {worth(left)}; today "
          + figures(today_rows) + f", worth {worth(today_rows)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
