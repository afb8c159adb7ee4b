"""Refit whisper's logistic gate on a dev dump and choose its threshold by the session-18 rule (issue 11).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_refit /tmp/dev-gate.json                 # today's gate, full refit, offset refit
    python -m bench.whisper_gate_refit /tmp/dev-gate.json --l2 0.3,1,3     # the L2 strengths tried

The rule (session 18): the threshold with the highest hit rate on the fit's dev prompts (the replay, in sample) whose
precision and silence are at least today's gate's (whisper/conf.py GATE_WEIGHTS at GATE_LOGIT on the same dump). Each
variant is then scored left out by batch: every batch of the dump by the same kind of fit on the other batches, at
the threshold chosen in sample, and per batch beside today's weights. Variants: `full` refits the bias and every
weight; `offset` keeps today's six nearness weights and refits the bias and the three inputs of session 18 on top of
them (as session 18 fitted them); `bias` refits the bias alone. Batches in FRESH_BATCHES are never in the dump the
fit prepares (bench/whisper_gate_fit.prepared).
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from bench import whisper_gate_fit as gf
from bench.roc import roc_auc

SIX = 6  # today's nearness inputs (g, cosine, best, margin, own_titled, overview), kept fixed by `offset`


def fit_variant(x: np.ndarray, y: np.ndarray, kind: str, base: np.ndarray, l2: float) -> np.ndarray:
    """Weights (bias first) of one variant: `full` all refitted; `offset` base's six fixed, bias and the rest
    refitted on top of them; `bias` base's weights, bias refitted."""
    if kind == "full":
        return gf.fit(x, y, l2)
    fixed = SIX if kind == "offset" else x.shape[1]
    off = x[:, :fixed] @ base[1:fixed + 1]
    free = x[:, fixed:]
    w = np.zeros(1 + free.shape[1])
    reg = np.eye(len(w)) * l2
    reg[0, 0] = 0.0
    xb = np.hstack([np.ones((len(x), 1)), free])

    def loss(v: np.ndarray) -> float:
        z = off + xb @ v
        return float(np.sum(np.logaddexp(0, z) - y * z) + 0.5 * v @ reg @ v)

    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(off + xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        step, before = np.linalg.solve(hess, grad), loss(w)
        while loss(w - step) > before and np.abs(step).max() > 1e-9:  # Newton with step halving
            step /= 2
        w -= step
    return np.concatenate([[w[0]], base[1:fixed + 1], w[1:]])


def logits_of(w: np.ndarray, x: np.ndarray, where: list) -> dict[tuple, float]:
    return {k: float(w[0] + x[j] @ w[1:]) for j, k in enumerate(where)}


def left_out_by_batch(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, kind: str, base: np.ndarray,
                      l2: float) -> dict[tuple, float]:
    """Each hit's log-odds from the variant fitted on every other batch."""
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], "batch") for w in where])
    out = {}
    for g in sorted(set(groups)):
        train = groups != g
        w = fit_variant(x[train], y[train], kind, base, l2)
        for j in np.where(~train)[0]:
            out[where[j]] = float(w[0] + x[j] @ w[1:])
    return out


def by_rule(dump: list[dict], logits: dict[tuple, float], floor: tuple[float, float, float]) -> float | None:
    """The threshold with the highest hit rate whose precision and silence reach `floor`'s (a tie: the higher)."""
    ok = []
    for t in gf.THRESHOLDS:
        h, p, s = gf.evaluate(dump, logits, t)
        if p >= floor[1] - 1e-9 and s >= floor[2] - 1e-9:
            ok.append((h, t))
    return max(ok)[1] if ok else None


def batches_of(dump: list[dict]) -> list[str]:
    return sorted({gf.group_of(item["prompt"], "batch") for item in dump}, key=int)


def per_batch(dump: list[dict], logits: dict[tuple, float], t: float) -> list[str]:
    """hit / precision / silence per batch at t, each prompt scored by the given log-odds."""
    out = []
    for b in batches_of(dump):
        keep = [i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") == b]
        sub = [dump[i] for i in keep]
        remap = {(n, ci, k): v for n, i in enumerate(keep) for (pi, ci, k), v in logits.items() if pi == i}
        h, p, s = gf.evaluate(sub, remap, t)
        out.append(f"{b}: {h:.3f}/{p:.3f}/{s:.3f}")
    return out


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump")
    parser.add_argument("--l2", default="1", help="L2 strengths, comma-separated (1)")
    parser.add_argument("--variants", default="full,offset,bias")
    parser.add_argument("--per-batch", action="store_true", help="also print each batch's figures")
    parser.add_argument("--inputs", default="", help="extra inputs of bench/whisper_gate_extras.py EXTRAS, or a "
                        "hit's `para` record (bench/whisper_gate_para.py), comma-separated, after the nine")
    parser.add_argument("--open-overlap", action="store_true", help="recall hits the overlap filter dropped reach "
                        "the gate (their evidence inputs 0)")
    args = parser.parse_args(argv)
    extras = tuple(n for n in args.inputs.split(",") if n)
    for name in extras:
        if name not in gf.EXTRAS:
            gf.EXTRAS[name] = lambda c, call, name=name: float((c.get("para") or {}).get(name, 0.0))
    dump = gf.prepared(json.loads(open(args.dump).read()), args.open_overlap)
    x, y, where = gf.rows(dump, extras)
    base = np.array(GATE_WEIGHTS + (0.0,) * len(extras), dtype=float)
    today = logits_of(base, x, where)
    floor = gf.evaluate(dump, today, GATE_LOGIT)
    print(f"{len(dump)} prompts, {len(y)} hits judged, {int(y.sum())} right; batches {', '.join(batches_of(dump))}")
    print(f"today's gate at {GATE_LOGIT:+.2f}: " + " / ".join(f"{v:.3f}" for v in floor))
    if args.per_batch:
        print("  per batch: " + "; ".join(per_batch(dump, today, GATE_LOGIT)))
    print("| variant | L2 | weights (bias first) | threshold | in sample | left out by batch | AUC in / batch |")
    print("|---|---:|---|---:|---|---|---|")
    for kind in args.variants.split(","):
        for l2 in (float(v) for v in args.l2.split(",")):
            w = fit_variant(x, y, kind, base, l2)
            ins = logits_of(w, x, where)
            lob = left_out_by_batch(dump, x, y, where, kind, base, l2)
            t = by_rule(dump, ins, floor)
            if t is None:
                print(f"| {kind} | {l2} | - | none reaches today's precision and silence | | | |")
                continue
            a_in = roc_auc(np.array([ins[k] for k in where]), y)
            a_lob = roc_auc(np.array([lob[k] for k in where]), y)
            print(f"| {kind} | {l2} | {', '.join(f'{v:.3f}' for v in w)} | {t:+.2f} | "
                  + " / ".join(f"{v:.3f}" for v in gf.evaluate(dump, ins, t)) + " | "
                  + " / ".join(f"{v:.3f}" for v in gf.evaluate(dump, lob, t)) + f" | {a_in:.3f} / {a_lob:.3f} |")
            if args.per_batch:
                print("  left out, per batch: " + "; ".join(per_batch(dump, lob, t)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
