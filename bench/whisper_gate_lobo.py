"""Whisper's logistic gate judged leave-one-batch-out, threshold and all (issue 11, session 20).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json                      # today's gate beside refits (L2)
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --variants nine:1,-g-thing_missing:1 --per-batch 9,10
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --loss --variants nine:1,-g:1,g+cosine:1
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --curve today        # or --curve=-g:1
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --routes all         # the other routes' gates
    python -m bench.whisper_gate_lobo /tmp/dev-gate.json --final=-g-thing_missing:1   # weights for a real run

Session 19 chose a refit's threshold in sample and scored the refit left out by batch at that threshold; the in-sample
choice rewards the fit's own optimism. Here the threshold is part of what is left out. The rule (written down before
any figure of this tool was read): for each dev batch b (FRESH_BATCHES out, bench/whisper_gate_fit.prepared), the
variant is fitted on the other batches; on those batches every hit is scored by the variant fitted without its own
batch (inner leave-one-batch-out), and the threshold is the one with the most hits among those whose precision and
silence, pooled over those batches, reach today's gate's there (whisper/conf.py GATE_WEIGHTS at GATE_LOGIT, replayed
on the same batches); a tie goes to the higher threshold; when none reaches both, the one that comes nearest (the
largest smaller shortfall). The fold's model at that threshold scores batch b; the batches' counts are summed.
Today's gate is scored on the same folds twice: as shipped (its weights at GATE_LOGIT, no fit) and with its weights
fixed and the threshold chosen by the rule. Thresholds: GRID, steps of 0.05 and GATE_LOGIT (first written with
whisper_gate_fit.THRESHOLDS, steps of 0.1: today's own 0.33 was not among them, so the rule could not give today's
gate back; changed after that first run).

A variant is `inputs:l2`, inputs `nine` or names of whisper.stages.gate.GATE_INPUTS joined by `+` (`g`, `cosine`,
`best`, `margin`, `own_titled`, `overview`, `thing_missing`, `memory_cover`, `prompt_words`); `-a-b` is the nine
without a and b; `offset`: today's six nearness weights kept, the bias and the other three refitted (session 18);
with `--extra NAME` (session 26, `--loss` only) a candidate input of bench/whisper_gate_extras.EXTRAS joins them, after
the nine (`nine+cos_margin:1`).
`--loss`: each variant's log-loss and AUC over all hits, every batch scored by the fit on the others,
with the difference to the nine-input fit and its standard error over the batches (paired; `--group store`: each
store left out instead, docs, lifelog, devprojects, club and prompts about nothing stored). `--curve`: the variant's
pooled left-out counts per threshold (one model per fold, one threshold everywhere; `today`: today's weights) and
what each step up costs in hits per silent prompt kept. `--routes`: the follow-up, identity and preference routes'
gates each chosen per fold by the same rule, the logistic gate as shipped. `--final`: the variant fitted on every
batch, its threshold by the rule on the batches' left-out log-odds, as settings for `bench.whisper_stores`.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from bench import whisper_gate_fit as gf
from bench.roc import roc_auc

GRID = sorted({round(float(t), 2) for t in np.arange(-1.5, 2.51, 0.05)})  # thresholds; GATE_LOGIT joins it in main
NAMES = ("g", "cosine", "best", "margin", "own_titled", "overview", "thing_missing", "memory_cover", "prompt_words")


def columns(spec: str, extras: tuple[str, ...] = ()) -> tuple[int, ...]:
    """Input columns of a variant's inputs part: `nine`, `a+b+...`, or `-a-b` (the nine without them); `a+b` may name
    the `extras` (`--extra`: bench/whisper_gate_extras.EXTRAS, their columns after the nine)."""
    if spec == "nine":
        return tuple(range(len(NAMES)))
    if spec == "offset":
        return OFFSET
    if spec.startswith("-"):
        out = [n for n in spec[1:].split("-") if n]
        unknown = [n for n in out if n not in NAMES]
        if unknown:
            raise ValueError(f"unknown gate input(s) {unknown}; known: {', '.join(NAMES)}")
        return tuple(i for i, n in enumerate(NAMES) if n not in out)
    known = NAMES + tuple(extras)
    names = [n for part in spec.split("+") if part for n in (NAMES if part == "nine" else (part,))]
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise ValueError(f"unknown gate input(s) {unknown or spec!r}; known: {', '.join(known)}")
    return tuple(known.index(n) for n in names)


def parse_variant(text: str, extras: tuple[str, ...] = ()) -> tuple[str, tuple[int, ...], float]:
    """`inputs:l2` -> (text, columns, l2); `today`: today's weights (columns of the nine, not fitted)."""
    spec, _, l2 = text.partition(":")
    spec = "nine" if spec == "today" else spec
    return text, columns(spec, extras), float(l2 or gf.L2)


OFFSET = ()  # the columns of `offset`: today's six nearness weights kept, the bias and the other three refitted


def fitted(x: np.ndarray, y: np.ndarray, cols: tuple[int, ...], l2: float, rows: np.ndarray) -> np.ndarray:
    """Weights (bias first, a 0 for every input left out) fitted on the given rows; `OFFSET`: session 18's way
    (bench/whisper_gate_refit.fit_variant "offset" on today's weights)."""
    if cols is OFFSET:
        from bench.whisper_gate_refit import fit_variant
        from whisper.conf import GATE_WEIGHTS

        return fit_variant(x[rows], y[rows], "offset", np.array(GATE_WEIGHTS, dtype=float), l2)
    w = gf.fit(x[rows][:, cols], y[rows], l2)
    full = np.zeros(1 + x.shape[1])
    full[0] = w[0]
    full[1 + np.array(cols)] = w[1:]
    return full


def left_out(x: np.ndarray, y: np.ndarray, groups: np.ndarray, cols: tuple[int, ...], l2: float,
             within: set[str]) -> np.ndarray:
    """Each hit of the batches `within` scored by the variant fitted on the other batches of `within` (else NaN)."""
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
    for t in GRID:
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
    parser.add_argument("--group", choices=("batch", "store"), default="batch",
                        help="with --loss: leave out a batch (default) or a store (bench/whisper_gate_fit.group_of)")
    parser.add_argument("--curve", help="one variant: its LOBO counts per threshold")
    parser.add_argument("--final", help="one variant fitted on every batch, its threshold by the rule (for a run)")
    parser.add_argument("--routes", help="route gates chosen per fold by the rule: all, or names of ROUTES")
    parser.add_argument("--per-batch", help="also each row's left-out counts of these batches (comma-separated)")
    parser.add_argument("--extra", default="", help="with --loss: candidate inputs (bench.whisper_gate_extras.EXTRAS, "
                        "comma-separated) after the nine, named in variants as nine+NAME:l2")
    args = parser.parse_args(argv)
    extras = tuple(n for n in args.extra.split(",") if n)
    if extras and not args.loss:
        parser.error("--extra is read by --loss only")
    GRID[:] = sorted(set(GRID) | {GATE_LOGIT})
    dump = gf.prepared(json.loads(open(args.dump).read()), False)
    x, y, where = gf.rows(dump, extras)
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    base = np.array(GATE_WEIGHTS, dtype=float)
    today = base[0] + x[:, :len(NAMES)] @ base[1:]
    batches = sorted(set(groups), key=int)
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right; batches {', '.join(batches)}")
    variants = [parse_variant(v, extras) for v in args.variants.split(",") if v]
    if args.loss:
        by = np.array([gf.group_of(dump[w[0]]["prompt"], args.group) for w in where])
        return loss_table(x, y, by, variants, today)
    if args.routes:
        route_gates(dump, as_dict(today, where), GATE_LOGIT, list(ROUTES) if args.routes == "all" else
                    args.routes.split(","))
        return 0
    if args.final:
        name, cols, l2 = parse_variant(args.final)
        every = frozenset(range(len(dump)))
        _, p, s = gf.evaluate(dump, as_dict(today, where), GATE_LOGIT)
        t = choose(dump, as_dict(left_out(x, y, groups, cols, l2, set(batches)), where), every, (p, s))
        w = fitted(x, y, cols, l2, np.ones(len(y), dtype=bool))
        print(f"{name} fitted on every batch, threshold by the rule on their left-out log-odds: {t:+.2f}\n"
              f"WHISPER_GATE_WEIGHTS=\"{' '.join(f'{v:.3f}' for v in w)}\" WHISPER_GATE_LOGIT={t}")
        print(f"replayed in sample: {figures(gf.evaluate(dump, as_dict(w[0] + x @ w[1:], where), t, counts=True))}")
        return 0
    if args.curve:
        return curve(dump, x, y, where, groups, parse_variant(args.curve), today)
    print("| gate | thresholds per left-out batch | LOBO hit / precision / silence |\n|---|---|---|")
    show = [b for b in (args.per_batch or "").split(",") if b]

    def line(name: str, lg: dict[tuple, float], t: float, thresholds: str) -> None:
        print(f"| {name} | {thresholds} | {figures(gf.evaluate(dump, lg, t, counts=True))} |")
        for b in show:
            keep = frozenset(i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") == b)
            print(f"|   batch {b} | | {figures(gf.evaluate(dump, lg, t, keep=keep, counts=True))} |")

    line("today's, as shipped", as_dict(today, where), GATE_LOGIT, f"{GATE_LOGIT:+.2f} everywhere")
    for name, cols, l2 in [("today's weights, threshold by the rule", None, 0.0)] + variants:
        lg, chosen = nested(dump, x, y, where, groups, cols, l2, today, GATE_LOGIT)
        line(name, lg, 0.0, " ".join(f"{t:+.2f}" for t in chosen.values()))
    return 0


ROUTES = {  # a route's gate in bench/whisper_gate_fit (as whisper/conf.py) and the values --routes tries
    "FOLLOW_UP_COSINE": [round(0.2 + 0.025 * i, 3) for i in range(13)],
    "IDENTITY_GATE": [round(0.15 + 0.025 * i, 3) for i in range(13)],
    "IDENTITY_GATE_NO_WORD": [round(0.2 + 0.025 * i, 3) for i in range(13)],
    "PREFERENCE_GATE": [round(0.2 + 0.025 * i, 3) for i in range(13)],
    "PREFERENCE_GATE_NO_WORD": [round(0.3 + 0.025 * i, 3) for i in range(13)],
}


def route_gates(dump: list[dict], today: dict[tuple, float], t: float, names: list[str]) -> None:
    """Each route's own gate chosen on the other batches by the rule (its value the one with the most hits whose
    precision and silence reach the shipped gates' there; a tie: the higher), the logistic gate and the other routes'
    gates as shipped; the left-out batches' counts summed beside the shipped gates'."""
    batches = sorted({gf.group_of(item["prompt"], "batch") for item in dump}, key=int)
    prompts = {b: frozenset(i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") == b)
               for b in batches}
    print(f"| route gate | shipped | chosen per left-out batch | LOBO hit / precision / silence |\n|---|---:|---|---|")
    print(f"| none changed | | | {figures(gf.evaluate(dump, today, t, counts=True))} |")
    for name in names:
        shipped, total, chosen = getattr(gf, name), np.zeros(6, dtype=int), []
        for b in batches:
            keep = frozenset().union(*(prompts[r] for r in batches if r != b))
            _, p, s = gf.evaluate(dump, today, t, keep=keep)
            best = None
            for v in ROUTES[name]:
                setattr(gf, name, v)
                h, p2, s2 = gf.evaluate(dump, today, t, keep=keep)
                if p2 >= p - 1e-9 and s2 >= s - 1e-9 and (best is None or (h, v) >= best):
                    best = (h, v)
            setattr(gf, name, best[1] if best else shipped)
            chosen.append(getattr(gf, name))
            total += np.array(gf.evaluate(dump, today, t, keep=prompts[b], counts=True))
            setattr(gf, name, shipped)
        print(f"| {name} | {shipped} | {' '.join(f'{v:.3f}' for v in chosen)} | {figures(tuple(total))} |")


def loss_table(x: np.ndarray, y: np.ndarray, groups: np.ndarray, variants: list, today: np.ndarray) -> int:
    """Each variant's log-loss with every group (a batch, or with --group store a store) scored by the fit on the
    other groups, beside the nine-input fit's on the same groups."""
    batches = sorted(set(groups))

    def per_batch(z: np.ndarray) -> np.ndarray:
        loss = np.logaddexp(0, np.clip(z, -30, 30)) - y * np.clip(z, -30, 30)
        return np.array([loss[groups == b].sum() for b in batches])

    ref = per_batch(left_out(x, y, groups, tuple(range(len(NAMES))), gf.L2, set(batches)))
    print(f"today's weights (gate9's, fitted on dev 1-14: in sample for those): "
          f"log-loss {per_batch(today).sum() / len(y):.4f}, AUC {roc_auc(today, y):.3f}")
    print("| variant | inputs | left-out log-loss | minus nine:1 (SE over groups) | left-out AUC |\n"
          "|---|---:|---:|---|---:|")
    for name, cols, l2 in variants:
        # `today`: today's weights as they are (parse_variant: not fitted), not a refit of the nine (until session 25)
        z = today if name == "today" else left_out(x, y, groups, cols, l2, set(batches))
        pb = per_batch(z)
        d = (pb - ref) / len(y)  # each batch's share of the mean loss's difference
        se = float(np.sqrt(len(d) * np.var(d, ddof=1)))
        print(f"| {name} | {len(cols) or len(NAMES)} | {pb.sum() / len(y):.4f} | {d.sum():+.4f} ({se:.4f}) | "
              f"{roc_auc(z, y):.3f} |")
    return 0


def curve(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, groups: np.ndarray, variant: tuple,
          today: np.ndarray) -> int:
    from whisper.conf import GATE_LOGIT

    name, cols, l2 = variant
    lg = as_dict(today if name == "today" else left_out(x, y, groups, cols, l2, set(groups)), where)
    print(f"{name}, one threshold over the ten left-out batches\n| log-odds >= | hit / precision / silence | "
          "hits lost per silent prompt kept, from the step below |\n|---:|---|---|")
    last = None
    for t in [t for t in GRID if t <= 2.0 and (abs(t * 10 - round(t * 10)) < 1e-6 or t == GATE_LOGIT)]:
        c = gf.evaluate(dump, lg, t, counts=True)
        step = ""
        if last is not None:
            lost, kept = last[0] - c[0], c[4] - last[4]
            step = f"{lost} / {kept}" + (f" = {lost / kept:.1f}" if kept else "")
        print(f"| {t:+.2f} | {figures(c)} | {step} |")
        last = c
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
