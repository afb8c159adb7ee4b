"""Whisper's gate held out by batch and by store, judged in right prompts (session 22, issue 11).

    python -m bench.whisper_stores --split dev --gate-dump DUMP --show     # the gate's rows, production path
    python -m bench.whisper_gate_held DUMP                                  # today's, (iii), (i) nine:1, (iv) nine:cv
    python -c "import sys, memory.ranking.scorer as s; s.PINNED['whisper'] = s.WEIGHTS_FILE; \\
        from bench.whisper_stores import main; sys.exit(main(sys.argv[1:]))" --split dev --gate-dump DUMP_V5 --show
    python -m bench.whisper_gate_held DUMP_V5 --against DUMP --variants nine:1   # (ii): scorer v5's dump
    python -m bench.whisper_gate_held DUMP --final nine:1                   # weights and threshold for a real run
    python -m bench.whisper_gate_held bench/datasets/whisper.json --shows a.txt b.txt   # right prompts, real runs
    python -m bench.whisper_gate_held DUMP --parts fit                      # sessions 24-25: today's, nine:1, drop
    python -m bench.whisper_gate_held DUMP --parts fit --variants today,drop,drop2   # session 25's candidates
    python -m bench.whisper_gate_held DUMP --parts fit --final drop         # the input(s) dropped, the weights
    python -m bench.whisper_gate_held bench/datasets/whisper.json --parts fit --shows a.txt b.txt

The rule (docs/benchmarks.md, "Whisper gate, session 22", merged before the first fit): a prompt is right when it
should inject and is hit with no wrong memory beside the answer, or should stay silent and does. In every fold the
threshold (bench.whisper_gate_lobo.GRID: steps of 0.05 and GATE_LOGIT) is the one with the most right prompts on the
training groups, each scored by a fit without it (today's weights: as they are); a tie goes to the higher threshold.
By batch: each dev batch is scored by the variant fitted on the other batches (FRESH_BATCHES and SEALED_BATCHES are
never read); by store: each store (docs, lifelog, devprojects, club, and the prompts about nothing stored,
bench.whisper_gate_fit.group_of) by the variant fitted on the others. Counts are summed over the left-out groups and
shown for batches 9-12 (the ones today's weights never saw: the decision's), 1-8 and all.

A variant is bench.whisper_gate_lobo's `inputs:l2`, or `inputs:cv`: its L2 chosen in each fold among L2_GRID by the
lowest inner left-out log-loss on the training groups. `--against DUMP`: today's gate as shipped is scored on that
dump (another scorer's dump of the same prompts: the baseline stays the shipped path). `--final`: the variant
fitted on every dev batch, its threshold by the rule on the batches' left-out log-odds, as settings for a real run.

`--parts fit` (sessions 24 and 25; was bench/whisper_gate_dev14.py): the same rule over every dev batch outside
FRESH_BATCHES (1-16 since session 26), counts shown for the fit batches (FIT: the decision's), UNSEEN (the batches
today's weights never saw: 15-16) and the rest, default variants today, nine:1 and `drop`. `drop` (session 24's structural
candidate): the nine inputs less one, L2 1, the input chosen inside each fold on the fold's training prompts alone as
the one whose removal lowers their left-out-by-store log-loss most (each store of the training prompts scored by the
fit on the training prompts of the other stores), none when no removal lowers it; the inner left-out log-odds the
fold's threshold is chosen on use the fold's chosen inputs. `drop2` (session 25): as `drop`, then a second input
dropped the same way from the rest.

`--extra NAME[,NAME]` (session 26): candidate inputs of bench/whisper_gate_extras.EXTRAS as columns after the nine;
the variant `nine+NAME:l2` fits the nine and NAME (today's weights read the nine alone). Every fold's note names its
threshold, and its right prompts with their difference to today's gate as shipped on the same prompts;
`--categories` adds a line of right prompts per prompt category (paraphrase, follow_up, identity, ...) under each row.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from bench import whisper_gate_fit as gf
from bench import whisper_gate_lobo as lobo
from bench.datasets.loader import SEALED_BATCHES

L2_GRID = (0.1, 0.3, 1.0, 3.0, 10.0)
DECIDING = frozenset({"9", "10", "11", "12"})  # dev batches today's weights (dev 1-8) and 0.33 never saw
COLUMNS = ("hit", "inject", "correct", "injected", "silent_ok", "silent", "right")
NINE = tuple(range(len(lobo.NAMES)))
SEEN = 14  # today's weights (gate9's, session 24) were fitted on dev 1-14
LAST_FIT = min(gf.FRESH_BATCHES) - 1  # the newest fit batch: 16 since session 26 (FRESH_BATCHES {17})
UNSEEN = frozenset(str(b) for b in range(SEEN + 1, LAST_FIT + 1))  # `--parts fit`: dev batches today's never saw
# `--parts fit` labels: every fit batch (FRESH_BATCHES out), UNSEEN, the rest
FIT, NEW, OLD = f"1-{LAST_FIT}", "-".join(sorted({str(SEEN + 1), str(LAST_FIT)}, key=int)), f"1-{SEEN}"


def load(path: str) -> list[dict]:
    """A gate dump as the gate judged it, sealed and fresh batches left out."""
    dump = [item for item in json.loads(open(path).read()) if item["prompt"].get("batch", 1) not in SEALED_BATCHES]
    return gf.prepared(dump, False)


def outcomes(dump: list[dict], logits: dict[tuple, float], t: float) -> np.ndarray:
    """Per prompt (rows in dump order) the columns of COLUMNS at threshold t, scored as
    bench.whisper_gate_fit.evaluate scores them (history served first; a memory served by the history counts for
    the hit)."""
    out = np.zeros((len(dump), len(COLUMNS)), dtype=int)
    for pi, item in enumerate(dump):
        p = item["prompt"]
        served, got = gf.replay(item, pi, logits, t)
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        correct = sum(k in good for k in got)
        if p["kind"] == "inject":
            hit = bool(set(p["expect"]) & (set(got) | served))
            out[pi] = (hit, 1, correct, len(got), 0, 0, hit and correct == len(got))
        else:
            out[pi] = (0, 0, correct, len(got), not got, 1, not got)
    return out


FLOOR: np.ndarray | None = None  # --operating hits: today's gate's per-prompt outcomes as shipped (session 20's rule)


def choose(dump: list[dict], logits: dict[tuple, float], keep: np.ndarray) -> float:
    """The threshold with the most right prompts among the prompts `keep` (a boolean mask); a tie: the higher.
    With FLOOR set (not this session's rule: session 20's, for comparison): the most hits whose precision and
    silence on `keep` reach today's gate's there, else the threshold that comes nearest."""
    if FLOOR is None:
        return max((int(outcomes(dump, logits, t)[keep, -1].sum()), t) for t in lobo.GRID)[1]
    f = FLOOR[keep].sum(axis=0)
    floor = (f[2] / max(f[3], 1), f[4] / max(f[5], 1))
    best, near = None, None
    for t in lobo.GRID:
        c = outcomes(dump, logits, t)[keep].sum(axis=0)
        p, s = c[2] / max(c[3], 1), c[4] / max(c[5], 1)
        if p >= floor[0] - 1e-9 and s >= floor[1] - 1e-9:
            best = max(best or (c[0], t), (c[0], t))
        near = max(near or (min(p - floor[0], s - floor[1]), t), (min(p - floor[0], s - floor[1]), t))
    return best[1] if best else near[1]


def inner_loss(x: np.ndarray, y: np.ndarray, groups: np.ndarray, cols: tuple[int, ...], l2: float,
               within: set[str]) -> float:
    """Log-loss over the groups `within`, each scored by the fit on the others of `within`."""
    z = lobo.left_out(x, y, groups, cols, l2, within)
    seen = ~np.isnan(z)
    z = np.clip(z[seen], -30, 30)
    return float((np.logaddexp(0, z) - y[seen] * z).sum())


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


def variant_cols(variant: str, extras: tuple[str, ...] = ()) -> tuple[tuple[int, ...], float]:
    """A variant's input columns and L2 (bench.whisper_gate_lobo's `inputs:l2`; `nine+NAME:l2` with NAME among
    `extras`, its column after the nine in `--extra` order)."""
    return lobo.parse_variant(variant, extras)[1:]


def held_out(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, groups: np.ndarray, prompt_groups:
             np.ndarray, variant: str, today: np.ndarray, stores: np.ndarray | None = None,
             extras: tuple[str, ...] = (), shipped: np.ndarray | None = None) -> tuple[np.ndarray, list[str]]:
    """Per prompt the COLUMNS counts, each group scored at its own fold's threshold by the variant fitted on the
    other groups; and per fold its threshold (and L2 when chosen, the inputs dropped for `drop` / `drop2`, which
    need `stores`: each hit's store). `variant` "today": today's weights, threshold by the rule. With `shipped`
    (today's gate's per-prompt counts as shipped), each note adds the fold's right prompts and their difference."""
    labels = sorted(set(prompt_groups), key=lambda g: (len(g), g))
    out = np.zeros((len(dump), len(COLUMNS)), dtype=int)
    notes = []
    for g in labels:
        rest = set(labels) - {g}
        keep = np.isin(prompt_groups, sorted(rest))
        gone = None
        if variant == "today":
            inner, outer, l2 = today, today, None
        else:
            if variant in ("drop", "drop2"):
                cols, gone = dropped_cols(x, y, stores, np.isin(groups, sorted(rest)), 1 + (variant == "drop2"))
                l2 = gf.L2
            else:
                cols, l2 = variant_cols(variant.replace(":cv", ":1"), extras)
            if variant.endswith(":cv"):
                l2 = min(L2_GRID, key=lambda v: (inner_loss(x, y, groups, cols, v, rest), v))
            inner = lobo.left_out(x, y, groups, cols, l2, rest)
            w = lobo.fitted(x, y, cols, l2, np.isin(groups, sorted(rest)))
            outer = w[0] + x @ w[1:]
        t = choose(dump, lobo.as_dict(inner, where), keep)
        mine = prompt_groups == g
        out[mine] = outcomes(dump, lobo.as_dict(outer, where), t)[mine]
        right = int(out[mine, -1].sum())
        notes.append(f"{g}:{t:+.2f}" + (f"/L2 {l2:g}" if variant.endswith(":cv") else "")
                     + (f"/-{'-'.join(gone) or 'none'}" if gone is not None else "")
                     + (f" ({right}, {right - int(shipped[mine, -1].sum()):+d})" if shipped is not None else ""))
    return out, notes


def figures(c: np.ndarray) -> str:
    h, n, r, i, s, m, right = (int(v) for v in c)
    return (f"{h / max(n, 1):.3f} ({h}/{n}) / {r / max(i, 1):.3f} ({r}/{i}) / {s / max(m, 1):.3f} ({s}/{m}); "
            f"right {right}/{n + m}")


def subsets(dump: list[dict], parts: str = "s22") -> dict[str, np.ndarray]:
    """The prompts each count is shown for, in the order shown; the decision's first. `parts` "s22": dev 9-12 (the
    batches session 22's weights never saw), 1-8, 1-12; "fit": FIT, UNSEEN (NEW), the rest (OLD)."""
    batch = np.array([gf.group_of(item["prompt"], "batch") for item in dump])
    if parts == "fit":
        unseen = np.isin(batch, sorted(UNSEEN))
        return {FIT: np.ones(len(dump), dtype=bool), NEW: unseen, OLD: ~unseen}
    return {"9-12": np.isin(batch, sorted(DECIDING)), "1-8": ~np.isin(batch, sorted(DECIDING)),
            "1-12": np.ones(len(dump), dtype=bool)}


def report(name: str, by: str, counts: np.ndarray, dump: list[dict], notes: str = "", parts: str = "s22") -> None:
    for k, (part, mask) in enumerate(subsets(dump, parts).items()):
        print(f"| {name} | {by} | {part} | {figures(counts[mask].sum(axis=0))} |"
              + (f" {notes} |" if k == 0 else " |"))


def by_category(dump: list[dict], counts: np.ndarray, shipped: np.ndarray) -> str:
    """`--categories`: right prompts per prompt category, and their difference to today's gate as shipped."""
    cats = np.array([item["prompt"]["category"] for item in dump])
    cells = []
    for cat in sorted(set(cats)):
        mine = cats == cat
        right, was = int(counts[mine, -1].sum()), int(shipped[mine, -1].sum())
        cells.append(f"{cat} {right}/{int(mine.sum())} ({right - was:+d})")
    return "right by category: " + ", ".join(cells)


def show_right(dataset: dict, shows: list[str], parts: str = "s22") -> list[str]:
    """Right prompts of saved `bench.whisper_stores --split dev --show` outputs (scored as bench.whisper_show_report
    scores them: a memory served by the history counts for the hit), for dev 9-12, 1-12 and the fresh batches
    (`parts` "fit": the fit batches, UNSEEN and the fresh batches by number)."""
    from pathlib import Path

    from bench.whisper_show_report import read_show

    prompts = [p for p in dataset["prompts"] if p["split"] == "dev" and p.get("batch", 1) not in SEALED_BATCHES]
    if parts == "fit":
        fresh = ",".join(str(b) for b in sorted(gf.FRESH_BATCHES))
        members = {FIT: lambda b: b not in gf.FRESH_BATCHES, NEW: lambda b: str(b) in UNSEEN,
                   fresh: lambda b: b in gf.FRESH_BATCHES}
    else:
        members = {"9-12": lambda b: str(b) in DECIDING, "1-12": lambda b: b not in gf.FRESH_BATCHES,
                   "fresh": lambda b: b in gf.FRESH_BATCHES}
    lines = []
    for show in shows:
        got = read_show(Path(show))
        cells = []
        for name, member in members.items():
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
          base: np.ndarray, extras: tuple[str, ...] = ()) -> tuple[np.ndarray, float, str]:
    """The variant fitted on every dev batch, its threshold by the rule on the batches' left-out log-odds."""
    batches = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    every, names = np.ones(len(dump), dtype=bool), set(batches)
    if variant == "today":
        return base, choose(dump, lobo.as_dict(today, where), every), ""
    note = ""
    if variant in ("drop", "drop2"):
        stores = np.array([gf.group_of(dump[w[0]]["prompt"], "store") for w in where])
        cols, gone = dropped_cols(x, y, stores, np.ones(len(y), dtype=bool), 1 + (variant == "drop2"))
        l2, note = gf.L2, f"dropped: {', '.join(gone) or 'none'}"
    else:
        cols, l2 = variant_cols(variant.replace(":cv", ":1"), extras)
        if variant.endswith(":cv"):
            l2 = min(L2_GRID, key=lambda v: (inner_loss(x, y, batches, cols, v, names), v))
            note = f"L2 by the batches' left-out log-loss: {l2:g}"
    t = choose(dump, lobo.as_dict(lobo.left_out(x, y, batches, cols, l2, names), where), every)
    return lobo.fitted(x, y, cols, l2, np.ones(len(y), dtype=bool)), t, note


def main(argv: list[str]) -> int:
    global FLOOR
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--variants", help="comma-separated: today (its weights, threshold by the rule), inputs:l2, "
                        "inputs:cv, drop, drop2 (default: today,nine:1,nine:cv; with --parts fit today,nine:1,drop)")
    parser.add_argument("--by", default="batch,store", help="batch, store or both (comma-separated)")
    parser.add_argument("--parts", choices=("s22", "fit"), default="s22",
                        help="the counts shown: s22 dev 9-12, 1-8, 1-12; fit: the fit batches, UNSEEN, the rest")
    parser.add_argument("--against", help="score today's gate as shipped on this dump (same prompts)")
    parser.add_argument("--final", help="one variant fitted on every dev batch, its threshold by the rule")
    parser.add_argument("--operating", choices=("right", "hits"), default="right",
                        help="right: this session's rule; hits: session 20's (most hits at today's precision, silence)")
    parser.add_argument("--extra", default="", help="candidate inputs (bench.whisper_gate_extras.EXTRAS, "
                        "comma-separated) after the nine, for the variant nine+NAME:l2")
    parser.add_argument("--categories", action="store_true",
                        help="after each row, its right prompts per category against today's gate as shipped")
    parser.add_argument("--shows", nargs="+",
                        help="saved dev `--show` outputs: their right prompts (the first argument: whisper.json)")
    args = parser.parse_args(argv)
    if args.variants is None:
        args.variants = "today,nine:1,drop" if args.parts == "fit" else "today,nine:1,nine:cv"
    if args.shows:
        print("\n".join(show_right(json.loads(open(args.dump).read()), args.shows, args.parts)))
        return 0
    lobo.GRID[:] = sorted(set(lobo.GRID) | {GATE_LOGIT})
    dump = load(args.dump)
    extras = tuple(n for n in args.extra.split(",") if n)
    x, y, where = gf.rows(dump, extras)
    base = np.array(GATE_WEIGHTS, dtype=float)
    today = base[0] + x[:, :len(NINE)] @ base[1:]
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right")
    if args.operating == "hits":
        FLOOR = outcomes(dump, lobo.as_dict(today, where), GATE_LOGIT)
    if args.final:
        w, t, note = final(dump, x, y, where, args.final, today, base, extras)
        if note and args.parts == "s22":  # session 22's layout: the chosen L2 on a line of its own
            print(note)
        print(f"{args.final} fitted on every dev batch, threshold by the rule on their left-out log-odds: {t:+.2f}"
              + (f"; {note}" if note and args.parts == "fit" else "")
              + f"\nORMAH_WHISPER_GATE_WEIGHTS=\"{' '.join(f'{v:.3f}' for v in w)}\" ORMAH_WHISPER_GATE_LOGIT={t}")
        lg = lobo.as_dict(w[0] + x[:, :len(w) - 1] @ w[1:], where)  # today's weights read the nine alone
        print(f"replayed in sample: {figures(outcomes(dump, lg, t).sum(axis=0))}")
        return 0
    print("| gate | held out by | batches | hit / precision / silence; right | thresholds per fold |\n"
          "|---|---|---|---|---|")
    shipped_dump = load(args.against) if args.against else dump
    if args.against:
        xa, _, wa = gf.rows(shipped_dump)
        shipped = outcomes(shipped_dump, lobo.as_dict(base[0] + xa @ base[1:], wa), GATE_LOGIT)
    else:
        shipped = outcomes(dump, lobo.as_dict(today, where), GATE_LOGIT)
    report(f"today's, as shipped ({GATE_LOGIT:+.2f})", "-", shipped, shipped_dump, parts=args.parts)
    stores = np.array([gf.group_of(dump[w[0]]["prompt"], "store") for w in where])
    for by in [b for b in args.by.split(",") if b]:
        rows_by = np.array([gf.group_of(dump[w[0]]["prompt"], by) for w in where])
        prompts_by = np.array([gf.group_of(item["prompt"], by) for item in dump])
        for variant in [v for v in args.variants.split(",") if v]:
            counts, notes = held_out(dump, x, y, where, rows_by, prompts_by, variant, today, stores, extras,
                                     None if args.against else shipped)
            report(variant, by, counts, dump, " ".join(notes), args.parts)
            if args.categories and not args.against:
                print(by_category(dump, counts, shipped))
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
