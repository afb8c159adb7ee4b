"""Whisper's logistic gate judged leave-one-batch-out, threshold and all (issue 11, session 20).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json                      # today's gate beside the refits
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --loss               # LOBO log-loss of smaller gates
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --variants nine:1,g+cos:1 --curve nine:1

Session 19 chose a refit's threshold in sample and scored the refit left out by batch at that threshold; the in-sample
choice rewards the fit's own optimism. Here the threshold is part of what is left out. The rule (written down before
any figure of this tool was read): for each dev batch b (FRESH_BATCHES out, bench/whisper_gate_fit.prepared), the
variant is fitted on the other batches; on those batches every hit is scored by the variant fitted without its own
batch (inner leave-one-batch-out), and the threshold (gf.THRESHOLDS) is the one with the most hits among those whose
precision and silence, pooled over those batches, reach today's gate's there (whisper/conf.py GATE_WEIGHTS at
GATE_LOGIT, replayed on the same batches); a tie goes to the higher threshold; when none reaches both, the one that
comes nearest (the largest smaller shortfall). The fold's model at that threshold scores batch b; the batches' counts
are summed. Today's gate is scored the same way on the same folds twice: as shipped (its weights at GATE_LOGIT, no
fit) and with its weights fixed and the threshold chosen by the rule.

A variant is `inputs:l2`, inputs `nine` or names of whisper.stages.gate.GATE_INPUTS joined by `+` (`g`, `cosine`,
`best`, `margin`, `own_titled`, `overview`, `thing_missing`, `memory_cover`, `prompt_words`); `-name` drops one
from the nine. `--loss`: each variant's log-loss and AUC over all hits, every batch scored by the fit on the others,
with the difference to the nine-input fit and its standard error over the batches (paired).
`--curve`: the variant's pooled left-out counts per threshold (one model per fold, the same threshold everywhere)
and what each step up costs in hits per silent prompt kept.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from bench import whisper_gate_fit as gf

NAMES = ("g", "cosine", "best", "margin", "own_titled", "overview", "thing_missing", "memory_cover", "prompt_words")


def columns(spec: str) -> tuple[int, ...]:
    """Input columns of a variant's inputs part: `nine`, `a+b+...`, or `-a-b` (the nine without them)."""
    if spec == "nine":
        return tuple(range(len(NAMES)))
    if spec.startswith("-"):
        out = [n for n in spec[1:].split("-") if n]
        unknown = [n for n in out if n not in NAMES]
        if unknown:
            raise ValueError(f"unknown gate input(s) {unknown}; known: {', '.join(NAMES)}")
        return tuple(i for i, n in enumerate(NAMES) if n not in out)
    names = [n for n in spec.split("+") if n]
    unknown = [n for n in names if n not in NAMES]
    if unknown or not names:
        raise ValueError(f"unknown gate input(s) {unknown or spec!r}; known: {', '.join(NAMES)}")
    return tuple(NAMES.index(n) for n in names)


def parse_variant(text: str) -> tuple[str, tuple[int, ...], float]:
    spec, _, l2 = text.partition(":")
    return text, columns(spec), float(l2 or gf.L2)


def fitted(x: np.ndarray, y: np.ndarray, cols: tuple[int, ...], l2: float, rows: np.ndarray) -> np.ndarray:
    """Weights (bias first, a 0 for every input left out) fitted on the given rows."""
    w = gf.fit(x[rows][:, cols], y[rows], l2)
    full = np.zeros(1 + x.shape[1])
    full[0] = w[0]
    full[1 + np.array(cols)] = w[1:]
    return full


def left_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray, cols: tuple[int, ...], l2: float,
             within: set[str]) -> np.ndarray:
    """Each hit of the batches `within` scored by the variant fitted on the other batches of `within` (NaN elsewhere)."""
    out = np.full(len(y), np.nan)
    for b in within:
        train = np.isin(groups, sorted(within - {b}))
        w = fitted(x, y, cols, l2, train)
        test = groups == b
        out[test] = w[0] + x[test] @ w[1:]
    return out


def as_dict(values: np.ndarray, where: list) -> dict[tuple, float]:
    return {k: float(v) for k, v in zip(where, values) if not np.isnan(v)}


def choose(dump: list[dict], logits: dict[tuple, float], keep: frozenset[int], floor: tuple[float, float]) -> float:
    """The rule's threshold on the prompts `keep`: the most hits with precision and silence at least `floor` (a tie:
    the higher threshold); when none reaches both, the threshold that comes nearest."""
    best, near = None, None
    for t in gf.THRESHOLDS:
        h, p, s = gf.evaluate(dump, logits, t, keep=keep)
        if p >= floor[0] - 1e-9 and s >= floor[1] - 1e-9:
            best = max(best or (h, t), (h, t))
        near = max(near or (min(p - floor[0], s - floor[1]), t), (min(p - floor[0], s - floor[1]), t))
    return best[1] if best else near[1]


def nested(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, groups: np.ndarray,
           cols: tuple[int, ...] | None, l2: float, today: np.ndarray, today_t: float
           ) -> tuple[dict[tuple, float], dict[str, float]]:
    """Every hit's log-odds minus its fold's threshold (so 0 is the gate), and each fold's threshold. `cols` None:
    today's weights, not fitted."""
    batches = sorted(set(groups), key=int)
    prompts = {b: frozenset(i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") == b)
               for b in batches}
    shifted = np.full(len(y), np.nan)
    chosen = {}
    today_d = as_dict(today, where)
    for b in batches:
        rest = set(batches) - {b}
        keep = frozenset().union(*(prompts[r] for r in rest))
        _, p, s = gf.evaluate(dump, today_d, today_t, keep=keep)
        inner = today_d if cols is None else as_dict(left_out(x, y, groups, cols, l2, rest), where)
        t = chosen[b] = choose(dump, inner, keep, (p, s))
        test = groups == b
        if cols is None:
            shifted[test] = today[test] - t
        else:
            w = fitted(x, y, cols, l2, np.isin(groups, sorted(rest)))
            shifted[test] = w[0] + x[test] @ w[1:] - t
    return as_dict(shifted, where), chosen


def figures(c: tuple[int, ...]) -> str:
    h, n, r, i, s, m = c
    return f"{h / n:.3f} ({h}/{n}) / {r / max(i, 1):.3f} ({r}/{i}) / {s / m:.3f} ({s}/{m})"


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--variants", default="nine:0.3,nine:1,nine:3,nine:10",
                        help="inputs:l2, comma-separated (nine:0.3,nine:1,nine:3,nine:10)")
    parser.add_argument("--loss", action="store_true", help="LOBO log-loss and AUC of each variant, not the rule")
    parser.add_argument("--curve", help="one variant: its LOBO counts per threshold")
    args = parser.parse_args(argv)
    dump = gf.prepared(json.loads(open(args.dump).read()), False)
    x, y, where = gf.rows(dump)
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    base = np.array(GATE_WEIGHTS, dtype=float)
    today = base[0] + x @ base[1:]
    batches = sorted(set(groups), key=int)
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right; batches {', '.join(batches)}")
    variants = [parse_variant(v) for v in args.variants.split(",") if v]
    if args.loss:
        return loss_table(x, y, groups, variants, today)
    if args.curve:
        return curve(dump, x, y, where, groups, parse_variant(args.curve))
    print("| gate | thresholds per left-out batch | LOBO hit / precision / silence |\n|---|---|---|")
    shipped = gf.evaluate(dump, as_dict(today, where), GATE_LOGIT, counts=True)
    print(f"| today's, as shipped | {GATE_LOGIT:+.2f} everywhere | {figures(shipped)} |")
    rows = [("today's weights, threshold by the rule", None, 0.0)] + variants
    for name, cols, l2 in rows:
        lg, chosen = nested(dump, x, y, where, groups, cols, l2, today, GATE_LOGIT)
        print(f"| {name} | {' '.join(f'{t:+.1f}' for t in chosen.values())} | "
              f"{figures(gf.evaluate(dump, lg, 0.0, counts=True))} |")
    return 0


def loss_table(x: np.ndarray, y: np.ndarray, groups: np.ndarray, variants: list, today: np.ndarray) -> int:
    batches = sorted(set(groups), key=int)

    def per_batch(z: np.ndarray) -> np.ndarray:
        loss = np.logaddexp(0, np.clip(z, -30, 30)) - y * np.clip(z, -30, 30)
        return np.array([loss[groups == b].sum() for b in batches])

    ref = per_batch(left_out(x, y, groups, tuple(range(len(NAMES))), gf.L2, set(batches)))
    print(f"today's weights (fitted on dev 1-8, so in sample for those): log-loss {per_batch(today).sum() / len(y):.4f}, "
          f"AUC {gf.auc(today, y):.3f}")
    print("| variant | inputs | LOBO log-loss | minus nine:1 (SE over batches) | LOBO AUC |\n|---|---:|---:|---|---:|")
    for name, cols, l2 in variants:
        z = left_out(x, y, groups, cols, l2, set(batches))
        pb = per_batch(z)
        d = (pb - ref) / len(y)  # each batch's share of the mean loss's difference
        se = float(np.sqrt(len(d) * np.var(d, ddof=1)))
        print(f"| {name} | {len(cols)} | {pb.sum() / len(y):.4f} | {d.sum():+.4f} ({se:.4f}) | {gf.auc(z, y):.3f} |")
    return 0


def curve(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, groups: np.ndarray, variant: tuple) -> int:
    name, cols, l2 = variant
    lg = as_dict(left_out(x, y, groups, cols, l2, set(groups)), where)
    print(f"{name}, one threshold over the ten left-out batches\n| log-odds >= | hit / precision / silence | "
          "hits lost per silent prompt kept, from the step below |\n|---:|---|---|")
    last = None
    for t in gf.THRESHOLDS:
        if -1.5 <= t <= 2.0:
            c = gf.evaluate(dump, lg, t, counts=True)
            step = ""
            if last is not None:
                lost, kept = last[0] - c[0], c[4] - last[4]
                step = f"{lost} / {kept}" + (f" = {lost / kept:.1f}" if kept else "")
            print(f"| {t:+.1f} | {figures(c)} | {step} |")
            last = c
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
