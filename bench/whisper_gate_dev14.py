"""Whisper's gate refitted on the dev fit batches and judged held out by batch and by store, in right prompts
(session 24 over dev 1-14; session 25 over dev 1-15, batch 16 fresh).

    python -m bench.whisper_stores --split dev --gate-dump DUMP --show     # the gate's rows, production path
    python -m bench.whisper_gate_dev14 DUMP                                 # today's, (i) nine:1, (ii), (iii) drop
    python -m bench.whisper_gate_dev14 DUMP --variants today,drop,drop2     # session 25's candidates
    python -m bench.whisper_gate_dev14 DUMP --final nine:1                  # weights and threshold for a real run
    python -m bench.whisper_gate_dev14 DUMP --final drop                    # (iii): the input dropped, its weights
    python -m bench.whisper_gate_dev14 bench/datasets/whisper.json --shows a.txt b.txt   # right prompts, real runs

The rule (docs/benchmarks.md, "Whisper gate, session 24", merged before the first candidate was run) is session 22's
(bench/whisper_gate_held.py: a prompt is right when it should inject and is hit with no wrong memory beside the
answer, or should stay silent and does; in every fold the threshold with the most right prompts on the training
groups, each scored by a fit without it, a tie to the higher) over the dev batches outside FRESH_BATCHES (1-15 since
session 25; FRESH_BATCHES and sealed batches never read). Counts are shown for 1-15 (the decision's), 15 (the batch
today's weights never saw: UNSEEN) and 1-14 (session 24 showed 1-14, 9-14 and 1-8).

Variants: those of bench.whisper_gate_held (`today`, `inputs:l2`, `inputs:cv`), `drop2` (as `drop`, then a second
input dropped the same way from the rest, none when no removal lowers the loss), and `drop` (the one structural
candidate): the nine inputs less one, L2 1, the input chosen inside each fold, on the fold's training prompts alone,
as the one whose removal lowers their left-out-by-store log-loss most (each store of the training prompts scored by
the fit on the training prompts of the other stores); none when no removal lowers it. The inner left-out log-odds the
fold's threshold is chosen on use the fold's chosen inputs.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from bench import whisper_gate_fit as gf
from bench import whisper_gate_held as held
from bench import whisper_gate_lobo as lobo
from bench.datasets.loader import SEALED_BATCHES

UNSEEN = frozenset({"15"})  # the dev batch today's weights (gate9's, fitted on dev 1-14) never saw (session 25)
FIT, NEW, OLD = "1-15", "15", "1-14"  # labels: every fit batch (FRESH_BATCHES out), UNSEEN, the rest
NINE = tuple(range(len(lobo.NAMES)))


def store_loss(x: np.ndarray, y: np.ndarray, stores: np.ndarray, cols: tuple[int, ...], train: np.ndarray) -> float:
    """Log-loss summed over the `train` rows, each store's rows scored by the fit (L2 1) on the other stores' rows
    of `train`."""
    total = 0.0
    for s in sorted(set(stores[train])):
        mine = train & (stores == s)
        w = lobo.fitted(x, y, cols, gf.L2, train & (stores != s))
        z = np.clip(w[0] + x[mine] @ w[1:], -30, 30)
        total += float((np.logaddexp(0, z) - y[mine] * z).sum())
    return total


def dropped(x: np.ndarray, y: np.ndarray, stores: np.ndarray, train: np.ndarray,
            cols: tuple[int, ...] = NINE) -> str | None:
    """The input of `cols` whose removal lowers the left-out-by-store log-loss on the `train` rows most; None when
    none does."""
    base = store_loss(x, y, stores, cols, train)
    loss, name = min((store_loss(x, y, stores, tuple(c for c in cols if c != i), train), lobo.NAMES[i])
                     for i in cols)
    return name if loss < base else None


def cols_without(*names: str | None) -> tuple[int, ...]:
    return tuple(c for c in NINE if lobo.NAMES[c] not in names)


def dropped_cols(x: np.ndarray, y: np.ndarray, stores: np.ndarray, train: np.ndarray,
                 times: int) -> tuple[tuple[int, ...], list[str]]:
    """`drop` (times 1) or `drop2` (times 2): inputs dropped one after the other by `dropped`, each chosen on the
    `train` rows; it stops when no removal lowers the loss."""
    names: list[str] = []
    cols = NINE
    for _ in range(times):
        name = dropped(x, y, stores, train, cols)
        if name is None:
            break
        names.append(name)
        cols = cols_without(*names)
    return cols, names


def held_out_drop(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, groups: np.ndarray,
                  prompt_groups: np.ndarray, stores: np.ndarray, times: int = 1) -> tuple[np.ndarray, list[str]]:
    """As whisper_gate_held.held_out for the `drop` variant (`drop2`: times 2): per fold the input(s) dropped are
    chosen on its training rows (`stores`: each hit's store), then the threshold by the rule on the training groups'
    left-out log-odds."""
    labels = sorted(set(prompt_groups), key=lambda g: (len(g), g))
    out = np.zeros((len(dump), len(held.COLUMNS)), dtype=int)
    notes = []
    for g in labels:
        rest = set(labels) - {g}
        keep = np.isin(prompt_groups, sorted(rest))
        train = np.isin(groups, sorted(rest))
        cols, names = dropped_cols(x, y, stores, train, times)
        inner = lobo.left_out(x, y, groups, cols, gf.L2, rest)
        w = lobo.fitted(x, y, cols, gf.L2, train)
        t = held.choose(dump, lobo.as_dict(inner, where), keep)
        mine = prompt_groups == g
        out[mine] = held.outcomes(dump, lobo.as_dict(w[0] + x @ w[1:], where), t)[mine]
        notes.append(f"{g}:{t:+.2f}/-{'-'.join(names) or 'none'}")
    return out, notes


def subsets(dump: list[dict]) -> dict[str, np.ndarray]:
    batch = np.array([gf.group_of(item["prompt"], "batch") for item in dump])
    unseen = np.isin(batch, sorted(UNSEEN))
    return {FIT: np.ones(len(dump), dtype=bool), NEW: unseen, OLD: ~unseen}


def report(name: str, by: str, counts: np.ndarray, dump: list[dict], notes: str = "") -> None:
    for part, mask in subsets(dump).items():
        print(f"| {name} | {by} | {part} | {held.figures(counts[mask].sum(axis=0))} |"
              + (f" {notes} |" if part == FIT else " |"))


def show_right(dataset: dict, shows: list[str]) -> list[str]:
    """Right prompts of saved `--split dev --show` outputs for the fit batches, UNSEEN and the fresh batch, scored as
    bench.whisper_show_report scores them (a memory served by the history counts for the hit)."""
    from pathlib import Path

    from bench.whisper_show_report import read_show

    prompts = [p for p in dataset["prompts"] if p["split"] == "dev" and p.get("batch", 1) not in SEALED_BATCHES]
    fresh = ",".join(str(b) for b in sorted(gf.FRESH_BATCHES))
    parts = {FIT: lambda b: b not in gf.FRESH_BATCHES, NEW: lambda b: str(b) in UNSEEN,
             fresh: lambda b: b in gf.FRESH_BATCHES}
    lines = []
    for show in shows:
        got = read_show(Path(show))
        cells = []
        for name, member in parts.items():
            right = n = 0
            for p in prompts:
                if not member(p.get("batch", 1)) or p["id"] not in got:
                    continue
                injected, served = got[p["id"]]
                good = set(p.get("expect", [])) | set(p.get("accept", []))
                n += 1
                if p["kind"] == "silent":
                    right += not injected
                else:
                    right += bool(set(p["expect"]) & (set(injected) | set(served))) and set(injected) <= good
            cells.append(f"{name} right {right}/{n}")
        lines.append(f"{show}: " + ", ".join(cells))
    return lines


def final(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, variant: str, today: np.ndarray,
          base: np.ndarray) -> tuple[np.ndarray, float, str]:
    """The variant fitted on every dev batch, its threshold by the rule on the batches' left-out log-odds."""
    batches = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    every, names = np.ones(len(dump), dtype=bool), set(batches)
    if variant == "today":
        return base, held.choose(dump, lobo.as_dict(today, where), every), ""
    note = ""
    if variant in ("drop", "drop2"):
        stores = np.array([gf.group_of(dump[w[0]]["prompt"], "store") for w in where])
        cols, gone = dropped_cols(x, y, stores, np.ones(len(y), dtype=bool), 1 + (variant == "drop2"))
        l2, note = gf.L2, f"dropped: {', '.join(gone) or 'none'}"
    else:
        _, cols, l2 = lobo.parse_variant(variant.replace(":cv", ":1"))
        if variant.endswith(":cv"):
            l2 = min(held.L2_GRID, key=lambda v: (held.inner_loss(x, y, batches, cols, v, names), v))
            note = f"L2 by the batches' left-out log-loss: {l2:g}"
    t = held.choose(dump, lobo.as_dict(lobo.left_out(x, y, batches, cols, l2, names), where), every)
    return lobo.fitted(x, y, cols, l2, np.ones(len(y), dtype=bool)), t, note


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--variants", default="today,nine:1,drop",
                        help="comma-separated: today (its weights, threshold by the rule), inputs:l2, inputs:cv, drop")
    parser.add_argument("--by", default="batch,store", help="batch, store or both (comma-separated)")
    parser.add_argument("--final", help="one variant fitted on every dev batch, its threshold by the rule")
    parser.add_argument("--shows", nargs="+",
                        help="saved dev `--show` outputs: their right prompts (the first argument: whisper.json)")
    args = parser.parse_args(argv)
    if args.shows:
        print("\n".join(show_right(json.loads(open(args.dump).read()), args.shows)))
        return 0
    lobo.GRID[:] = sorted(set(lobo.GRID) | {GATE_LOGIT})
    dump = held.load(args.dump)
    x, y, where = gf.rows(dump)
    base = np.array(GATE_WEIGHTS, dtype=float)
    today = base[0] + x @ base[1:]
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right")
    if args.final:
        w, t, note = final(dump, x, y, where, args.final, today, base)
        print(f"{args.final} fitted on every dev batch, threshold by the rule on their left-out log-odds: {t:+.2f}"
              + (f"; {note}" if note else "")
              + f"\nORMAH_WHISPER_GATE_WEIGHTS=\"{' '.join(f'{v:.3f}' for v in w)}\" ORMAH_WHISPER_GATE_LOGIT={t}")
        replayed = held.outcomes(dump, lobo.as_dict(w[0] + x @ w[1:], where), t).sum(axis=0)
        print(f"replayed in sample: {held.figures(replayed)}")
        return 0
    print("| gate | held out by | batches | hit / precision / silence; right | thresholds per fold |\n"
          "|---|---|---|---|---|")
    report(f"today's, as shipped ({GATE_LOGIT:+.2f})", "-", held.outcomes(dump, lobo.as_dict(today, where), GATE_LOGIT),
           dump)
    stores = np.array([gf.group_of(dump[w[0]]["prompt"], "store") for w in where])
    for by in [b for b in args.by.split(",") if b]:
        rows_by = np.array([gf.group_of(dump[w[0]]["prompt"], by) for w in where])
        prompts_by = np.array([gf.group_of(item["prompt"], by) for item in dump])
        for variant in [v for v in args.variants.split(",") if v]:
            if variant in ("drop", "drop2"):
                counts, notes = held_out_drop(dump, x, y, where, rows_by, prompts_by, stores,
                                              1 + (variant == "drop2"))
            else:
                counts, notes = held.held_out(dump, x, y, where, rows_by, prompts_by, variant, today)
            report(variant, by, counts, dump, " ".join(notes))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
