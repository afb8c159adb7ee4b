"""Whisper's gate with a model that is not linear in its inputs, judged leave-one-batch-out (issue 11, session 21).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_trees /tmp/dev-gate.json                 # every variant of RULE beside today's
    python -m bench.whisper_gate_trees /tmp/dev-gate.json --operating     # item 3: thresholds held out, the second memory
    python -m bench.whisper_gate_trees /tmp/dev-gate.json --final trees2:25  # fitted on every batch, as a table

THE RULE (written down and committed before any figure of this tool was read; session 21, gate8).

Data: a fresh `--gate-dump` of dev 1-11 (bench/whisper_gate_fit.prepared: FRESH_BATCHES out; SEALED_BATCHES out too).
Hits are recall's hits the logistic gate judges; the label is "expected or accepted memory"; the nine inputs are
whisper.stages.gate.GATE_INPUTS as the dump holds them, plus `follow_up` (the call is a follow-up: the route the
gate is on, production knows it as run.follow_up) where a variant says so.

Variants, every one fitted by this script with numpy only, each a small table a conf file can hold:
  nine:1        the nine-input logistic at L2 1 (session 20's reference refit).
  stumps:K      the nine-input logistic at L2 1 as the start, then K rounds of gradient boosting of depth-1 trees
                (stumps) on the log-loss, shrinkage 0.1, each leaf one Newton step with L2 1 on the leaf, splits at
                the training rows' quantiles (32 bins per input); K in {10, 25, 50}.
  trees2:K      the same with depth-2 trees (one split, then one split in each half, each chosen greedily); K in
                {10, 25}.
  stumps+f:25   stumps:25 with `follow_up` as a tenth input the trees may split on.
  hinge         the nine-input logistic at L2 1 plus at most four terms, standardised, from a fixed set: the 36
                products of two of the nine inputs and hinges max(0, v - q) of g, cosine, margin, memory_cover and
                prompt_words at their 25th, 50th and 75th percentiles on the training rows (15); forward selection,
                each step adding the term that lowers the training batches' leave-one-batch-out log-loss most, stopping
                when the best term lowers it by less than 0.0005 per hit. Selected inside each outer fold on its ten
                batches (the threshold's inner fits reuse that fold's terms).

Judging (the brief, issue 11): for each dev batch b of 1-11 the variant is fitted on the other ten; the threshold is
gate7's rule (bench/whisper_gate_lobo.choose: on the ten batches, every hit scored by the variant fitted without its
own batch, the threshold of bench/whisper_gate_lobo.GRID with the most hits whose pooled precision and silence reach
today's gate's (whisper/conf.py GATE_WEIGHTS at GATE_LOGIT) on those ten; a tie: the higher); batch b is scored at it
and the eleven batches' counts are summed (LOBO hits / precision / silence), beside today's gate as shipped. Also the
LOBO log-loss per hit and AUC (every batch scored by the fit on the other ten).
A variant is a candidate only if its LOBO hits are higher than today's as shipped and its LOBO precision and silence
are not lower; among candidates the one with the most LOBO hits (a tie: the lower LOBO log-loss) is chosen, and only
that one is fitted on all of dev 1-11 (`--final`, threshold by the rule on the batches' left-out scores), shipped in
a temporary build and run for real (`bench.whisper_stores --split dev --show`): it is merged only if the real run on
dev 1-11 has more hits than today's at precision and silence not lower, and batch 12 dev (run once, for that one
variant) has hits not fewer and precision and silence not lower than today's 0.481 (26/54) / 0.643 (27/42) / 0.696
(16/23). No candidate: nothing changes, and every figure goes in docs/benchmarks.md.

Item 3, the operating point (`--operating`; today's weights and, if one is chosen, the chosen variant):
  a. the LOBO curve: per threshold of GRID (steps 0.1 and 0.33), the summed held-out counts and in how many of the
     eleven folds the held-out batch reaches precision >= 0.85 and silence >= 0.9;
  b. per fold, the lowest threshold at which the held-out batch reaches both (an oracle, not a rule) and the hits that
     costs against 0.33;
  c. the rule for a new default: in each fold the threshold with the most hits on the ten training batches whose pooled
     precision >= 0.85 and silence >= 0.9 there (a tie: the higher; none: the nearest, as bench/whisper_gate_lobo.choose);
     GATE_LOGIT changes only if this rule's LOBO counts reach precision >= 0.85 and silence >= 0.9 summed over the
     eleven held-out batches where 0.33 does not, or keep more hits at precision and silence not lower; and then only
     if batch 12 dev is not worse in the real run.
  d. the second memory (the cap of 2): of the prompts where two memories are whispered and the first is right, how
     often the second is wrong (and, summed, how often it is the answer); then a second threshold t2 >= t for the
     second memory of the logistic route, chosen per fold on the ten training batches as the value of GRID >= t with
     the most hits whose pooled precision and silence reach t2 = t's there (a tie: the higher), batch b scored at
     it. Kept only if LOBO hits are not lower and LOBO precision is higher, silence not lower, and batch 12 dev is
     not worse in the real run.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field

import numpy as np

from bench import whisper_gate_fit as gf
from bench import whisper_gate_lobo as lobo
from bench.roc import roc_auc

NINE = 9  # the nine GATE_INPUTS; column 9 of X is `follow_up`
LR, LEAF_L2, BINS, MIN_HESS = 0.1, 1.0, 32, 1.0  # boosting: shrinkage, a leaf's ridge, cuts per input, a leaf's hessian
HINGED = (0, 1, 3, 7, 8)  # g, cosine, margin, memory_cover, prompt_words
MAX_TERMS, TERM_GAIN = 4, 0.0005
NAMES = lobo.NAMES + ("follow_up",)


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))


def logistic(x: np.ndarray, y: np.ndarray, l2: float = 1.0, iters: int = 50) -> np.ndarray:
    """bench/whisper_gate_fit.fit's Newton steps (bias not penalised), stopping once a step moves no weight 1e-8."""
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.eye(len(w)) * l2
    reg[0, 0] = 0.0
    for _ in range(iters):
        p = sigmoid(xb @ w)
        step = np.linalg.solve(xb.T @ (xb * (p * (1 - p))[:, None]) + reg, xb.T @ (p - y) + reg @ w)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


# A tree is a leaf value (float) or (column, cut, left, right): x[column] <= cut goes left.
def grow(x: np.ndarray, g: np.ndarray, h: np.ndarray, cuts: list[np.ndarray], depth: int, cols: tuple[int, ...]):
    """The split with the largest gain in the second-order log-loss (each side's leaf one Newton step with LEAF_L2),
    each side at least MIN_HESS of hessian; `depth` 2: each half split again the same way."""
    total_g, total_h = g.sum(), h.sum()
    leaf = float(-total_g / (total_h + LEAF_L2))
    if depth == 0 or len(g) < 2:
        return leaf
    base = total_g ** 2 / (total_h + LEAF_L2)
    best = None
    for j in cols:
        c = cuts[j]
        if len(c) == 0:
            continue
        k = np.searchsorted(c, x[:, j], side="left")  # x <= c[k] for every k >= this
        gl = np.cumsum(np.bincount(k, weights=g, minlength=len(c) + 1))[:-1]
        hl = np.cumsum(np.bincount(k, weights=h, minlength=len(c) + 1))[:-1]
        gr, hr = total_g - gl, total_h - hl
        ok = (hl >= MIN_HESS) & (hr >= MIN_HESS)
        if not ok.any():
            continue
        gain = np.where(ok, gl ** 2 / (hl + LEAF_L2) + gr ** 2 / (hr + LEAF_L2) - base, -np.inf)
        i = int(np.argmax(gain))
        if best is None or gain[i] > best[0]:
            best = (float(gain[i]), j, float(c[i]))
    if best is None or best[0] <= 0:
        return leaf
    _, j, cut = best
    left = x[:, j] <= cut
    return (j, cut, grow(x[left], g[left], h[left], cuts, depth - 1, cols),
            grow(x[~left], g[~left], h[~left], cuts, depth - 1, cols))


def predict_tree(tree, x: np.ndarray) -> np.ndarray:
    if not isinstance(tree, tuple):
        return np.full(len(x), tree)
    j, cut, left, right = tree
    return np.where(x[:, j] <= cut, predict_tree(left, x), predict_tree(right, x))


def scaled(tree, factor: float):
    if not isinstance(tree, tuple):
        return round(tree * factor, 4)
    j, cut, left, right = tree
    return (j, cut, scaled(left, factor), scaled(right, factor))


@dataclass
class Model:
    """Log-odds = w[0] + x[:, :9] @ w[1:] + the terms' weights x their standardised values + the trees' leaves."""
    w: np.ndarray
    trees: list = field(default_factory=list)
    terms: list = field(default_factory=list)  # (kind, a, b, mean, sd): ("prod", i, j) or ("hinge", i, knot)
    term_w: np.ndarray = field(default_factory=lambda: np.zeros(0))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        z = self.w[0] + x[:, :NINE] @ self.w[1:]
        if self.terms:
            z = z + term_matrix(x, self.terms) @ self.term_w
        for tree in self.trees:
            z = z + predict_tree(tree, x)
        return z


def raw_term(x: np.ndarray, kind: str, a: int, b: float) -> np.ndarray:
    return x[:, a] * x[:, int(b)] if kind == "prod" else np.maximum(0.0, x[:, a] - b)


def term_matrix(x: np.ndarray, terms: list) -> np.ndarray:
    return np.column_stack([(raw_term(x, k, a, b) - m) / s for k, a, b, m, s in terms])


def candidate_terms(x: np.ndarray) -> list:
    """The 36 products of two of the nine inputs and the hinges of HINGED at the rows' quartiles, with the rows'
    mean and spread (a term constant on the rows is left out)."""
    out = []
    specs = [("prod", i, j) for i in range(NINE) for j in range(i + 1, NINE)]
    specs += [("hinge", i, float(np.quantile(x[:, i], q))) for i in HINGED for q in (0.25, 0.5, 0.75)]
    for kind, a, b in specs:
        v = raw_term(x, kind, a, b)
        if v.std() > 1e-9:
            out.append((kind, a, b, float(v.mean()), float(v.std())))
    return out


def fit_terms(x: np.ndarray, y: np.ndarray, terms: list) -> Model:
    z = np.hstack([x[:, :NINE], term_matrix(x, terms)]) if terms else x[:, :NINE]
    w = logistic(z, y)
    return Model(w[:NINE + 1], terms=list(terms), term_w=w[NINE + 1:])


def log_loss_sum(z: np.ndarray, y: np.ndarray) -> float:
    z = np.clip(z, -30, 30)
    return float((np.logaddexp(0, z) - y * z).sum())


def select_terms(x: np.ndarray, y: np.ndarray, groups: np.ndarray) -> list:
    """Forward selection: each step the candidate term that lowers the rows' leave-one-batch-out log-loss most, until
    the best lowers it by less than TERM_GAIN per hit or MAX_TERMS are in."""
    pool, chosen = candidate_terms(x), []
    batches = sorted(set(groups))
    masks = [groups == b for b in batches]

    def lobo_loss(terms: list) -> float:
        return sum(log_loss_sum(fit_terms(x[~m], y[~m], terms)(x[m]), y[m]) for m in masks) / len(y)

    now = lobo_loss(chosen)
    while len(chosen) < MAX_TERMS and pool:
        scores = [lobo_loss(chosen + [t]) for t in pool]
        i = int(np.argmin(scores))
        if now - scores[i] < TERM_GAIN:
            break
        now = scores[i]
        chosen.append(pool.pop(i))
    return chosen


def boost(x: np.ndarray, y: np.ndarray, rounds: int, depth: int, cols: tuple[int, ...]) -> Model:
    """The nine-input logistic at L2 1, then `rounds` trees of `depth` on its log-loss gradient, shrinkage LR."""
    start = Model(logistic(x[:, :NINE], y))
    z = start(x)
    cuts = [np.unique(np.quantile(x[:, j], np.linspace(0, 1, BINS + 1)[1:-1])) for j in range(x.shape[1])]
    for _ in range(rounds):
        p = sigmoid(z)
        tree = scaled(grow(x, p - y, p * (1 - p), cuts, depth, cols), LR)
        start.trees.append(tree)
        z = z + predict_tree(tree, x)
    return start


def trainer(spec: str):
    """A variant's fit: (X, y, groups, like) -> Model; `like`: the fold's outer model (hinge: its terms kept)."""
    kind, _, k = spec.partition(":")
    if kind == "nine":
        return lambda x, y, groups, like=None: Model(logistic(x[:, :NINE], y, float(k or 1.0)))
    if kind in ("stumps", "trees2", "stumps+f"):
        depth = 2 if kind == "trees2" else 1
        cols = tuple(range(NINE + (kind == "stumps+f")))
        return lambda x, y, groups, like=None: boost(x, y, int(k), depth, cols)
    if kind == "hinge":
        return lambda x, y, groups, like=None: fit_terms(
            x, y, like.terms if like is not None else select_terms(x, y, groups))
    raise ValueError(f"unknown variant {spec!r}: nine:L2, stumps:K, trees2:K, stumps+f:K or hinge")


RULE = ("nine:1", "stumps:10", "stumps:25", "stumps:50", "trees2:10", "trees2:25", "stumps+f:25", "hinge")


def load(path: str) -> tuple[list[dict], np.ndarray, np.ndarray, list, np.ndarray]:
    """The dump as production judged it (bench/whisper_gate_fit.prepared: FRESH_BATCHES out), sealed batches out,
    its rows with `follow_up` as a tenth column, and each row's batch."""
    from bench.datasets.loader import SEALED_BATCHES

    raw = [item for item in json.loads(open(path).read()) if item["prompt"].get("batch", 1) not in SEALED_BATCHES]
    dump = gf.prepared(raw, False)
    x, y, where = gf.rows(dump)
    fu = np.array([float(bool(dump[p]["calls"][c][k].get("follow_up"))) for p, c, k in where])
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    return dump, np.column_stack([x, fu]), y, where, groups


def batch_prompts(dump: list[dict]) -> dict[str, frozenset[int]]:
    out: dict[str, set[int]] = {}
    for i, item in enumerate(dump):
        out.setdefault(gf.group_of(item["prompt"], "batch"), set()).add(i)
    return {b: frozenset(v) for b, v in out.items()}


def lobo_run(dump, x, y, where, groups, fit, today: np.ndarray, today_t: float, floor=None):
    """The rule: every batch scored by the fit on the others at the threshold chosen on them (inner LOBO; `floor`:
    fixed precision and silence instead of today's on those batches). Returns the shifted log-odds (0 is the gate),
    the raw left-out log-odds, and each fold's threshold."""
    batches = sorted(set(groups), key=int)
    prompts = batch_prompts(dump)
    shifted, raw, chosen = np.full(len(y), np.nan), np.full(len(y), np.nan), {}
    today_d = lobo.as_dict(today, where)
    for b in batches:
        rest = [r for r in batches if r != b]
        keep = frozenset().union(*(prompts[r] for r in rest))
        train = np.isin(groups, rest)
        outer = fit(x[train], y[train], groups[train])
        inner = np.full(len(y), np.nan)
        for r in rest:
            m = np.isin(groups, [q for q in rest if q != r])
            inner[groups == r] = fit(x[m], y[m], groups[m], outer)(x[groups == r])
        if floor is None:
            _, p, s = gf.evaluate(dump, today_d, today_t, keep=keep)
            floor_b = (p, s)
        else:
            floor_b = floor
        t = chosen[b] = lobo.choose(dump, lobo.as_dict(inner, where), keep, floor_b)
        test = groups == b
        raw[test] = outer(x[test])
        shifted[test] = raw[test] - t
    return shifted, raw, chosen


def loss_line(z: np.ndarray, y: np.ndarray, groups: np.ndarray, ref: np.ndarray | None) -> str:
    """Log-loss per hit, its difference to `ref`'s with the standard error over the batches (paired), and AUC."""
    diff = ""
    if ref is not None:
        d = np.array([log_loss_sum(z[groups == b], y[groups == b]) - log_loss_sum(ref[groups == b], y[groups == b])
                      for b in sorted(set(groups))]) / len(y)
        diff = f"{d.sum():+.4f} ({np.sqrt(len(d) * np.var(d, ddof=1)):.4f})"
    return f"{log_loss_sum(z, y) / len(y):.4f} | {diff} | {roc_auc(z, y):.3f}"


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--variants", default=",".join(RULE), help=f"comma-separated ({','.join(RULE)})")
    parser.add_argument("--per-batch", help="also each row's left-out counts of these batches (comma-separated)")
    parser.add_argument("--final", help="one variant fitted on every batch, its threshold by the rule")
    parser.add_argument("--operating", action="store_true", help="item 3: the threshold held out, the second memory")
    parser.add_argument("--curve", help="variants (comma-separated): left-out counts per threshold beside today's")
    args = parser.parse_args(argv)
    lobo.GRID[:] = sorted(set(lobo.GRID) | {GATE_LOGIT})
    dump, x, y, where, groups = load(args.dump)
    base = np.array(GATE_WEIGHTS, dtype=float)
    today = base[0] + x[:, :NINE] @ base[1:]
    batches = sorted(set(groups), key=int)
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right; batches {', '.join(batches)}")
    if args.final:
        return final(dump, x, y, where, groups, args.final, today, GATE_LOGIT)
    if args.operating:
        from bench.whisper_gate_operating import operating

        return operating(dump, x, y, where, groups, today, GATE_LOGIT)
    if args.curve:
        return curve(dump, x, y, where, groups, [v for v in args.curve.split(",") if v], today)
    show = [b for b in (args.per_batch or "").split(",") if b]
    prompts = batch_prompts(dump)
    print("| gate | thresholds per left-out batch | LOBO hit / precision / silence | LOBO log-loss | minus nine:1 "
          "(SE) | AUC |\n|---|---|---|---:|---|---:|")
    ref = None

    def line(name: str, lg: dict, thresholds: str, z: np.ndarray) -> None:
        print(f"| {name} | {thresholds} | {lobo.figures(gf.evaluate(dump, lg, 0.0, counts=True))} | "
              f"{loss_line(z, y, groups, ref)} |", flush=True)
        for b in show:
            print(f"|   batch {b} | | {lobo.figures(gf.evaluate(dump, lg, 0.0, keep=prompts[b], counts=True))} "
                  "| | | |")

    ref = lobo_run(dump, x, y, where, groups, trainer("nine:1"), today, GATE_LOGIT)[1]
    line("today's, as shipped (1-8 in sample)", lobo.as_dict(today - GATE_LOGIT, where), f"{GATE_LOGIT:+.2f}", today)
    for spec in [v for v in args.variants.split(",") if v]:
        shifted, raw, chosen = lobo_run(dump, x, y, where, groups, trainer(spec), today, GATE_LOGIT)
        line(spec, lobo.as_dict(shifted, where), " ".join(f"{t:+.2f}" for t in chosen.values()), raw)
    return 0


def curve(dump, x, y, where, groups, specs: list[str], today: np.ndarray) -> int:
    """Not the rule: one threshold for every left-out batch (each scored by the fit on the others), so that variants
    can be read beside today's weights at the same number of answers."""
    cols = {"today's": lobo.as_dict(today, where)}
    for spec in specs:
        z = np.full(len(y), np.nan)
        for b in sorted(set(groups), key=int):
            m = groups != b
            z[~m] = trainer(spec)(x[m], y[m], groups[m])(x[~m])
        cols[spec] = lobo.as_dict(z, where)
    print("| log-odds >= | " + " | ".join(cols) + " |\n|---:|" + "---|" * len(cols))
    for t in [t for t in lobo.GRID if -0.3 <= t <= 1.0]:
        print(f"| {t:+.2f} | " + " | ".join(lobo.figures(gf.evaluate(dump, lg, t, counts=True)) for lg in cols.values())
              + " |")
    return 0


def final(dump, x, y, where, groups, spec: str, today: np.ndarray, today_t: float) -> int:
    """The variant fitted on every batch; its threshold by the rule on every batch's left-out log-odds."""
    fit = trainer(spec)
    every = frozenset(range(len(dump)))
    _, p, s = gf.evaluate(dump, lobo.as_dict(today, where), today_t)
    model = fit(x, y, groups)
    inner = np.full(len(y), np.nan)
    for b in sorted(set(groups), key=int):
        m = groups != b
        inner[~m] = fit(x[m], y[m], groups[m], model)(x[~m])
    t = lobo.choose(dump, lobo.as_dict(inner, where), every, (p, s))
    print(f"{spec} fitted on every batch; threshold by the rule on their left-out log-odds: {t:+.2f}")
    print(f"replayed in sample: {lobo.figures(gf.evaluate(dump, lobo.as_dict(model(x), where), t, counts=True))}")
    print(json.dumps(table(model, t)))
    return 0


def table(model: Model, t: float) -> dict:
    """The model as whisper/conf.py would hold it."""
    return {"weights": [round(float(v), 4) for v in model.w], "logit": t, "trees": model.trees,
            "terms": [[k, a, b, round(m, 6), round(s, 6), round(float(w), 4)]
                      for (k, a, b, m, s), w in zip(model.terms, model.term_w)]}


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
