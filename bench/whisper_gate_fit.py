"""Fit whisper's logistic gate on the dev split's candidates (issue 11, item 9).

    python -m bench.whisper_stores --split dev --sweep --dump /tmp/dev.json   # the candidates, gates open
    python -m bench.whisper_gate_fit /tmp/dev.json                            # weights and operating point

For every recall hit that reached the gate of a dev prompt (identity-route memories keep their cosine gate), four
signals the gate already has: recall's calibrated probability g, the raw cosine, the gaps of both to the
prompt's best recall hit, whether it is the best by g, and its margin in g over the next one. A logistic model (numpy, L2, Newton steps) is fitted on "expected or accepted memory";
the operating point is the threshold on its log-odds with the highest dev hit rate among those with precision
>= 0.9 and silence >= 0.95, applied with the same served/cap logic as the sweep. Prints the numbers to put in
whisper.conf (WhisperConf.gate_weights, gate_logit). The strong-cosine pass (0.70) and the cap stay.
"""

from __future__ import annotations

import json
import sys

import numpy as np

L2 = 1.0
CAPS = (1, 2)
IDENTITY_GATES = (0.25,)  # the identity gate stays as tuned with the sweep
STRONG = 0.70


def features(cands) -> list[tuple[list[float], tuple]]:
    """[g, cos, cos - best cos, g - best g, best by g, g - next g] per recall hit outside the identity route (the
    same signals as whisper.stages.gate.gate_features)."""
    hits = [c for c in cands if c[3] and not c[2]]
    best_g = max((c[0] for c in hits), default=0.0)
    best_cos = max((c[4] for c in hits), default=0.0)
    by_g = sorted((c[0] for c in hits), reverse=True)
    out = []
    for c in hits:
        rank = by_g.index(c[0])
        nxt = by_g[rank + 1] if rank + 1 < len(by_g) else 0.0
        row = [c[0], c[4], c[4] - best_cos, c[0] - best_g, float(rank == 0), c[0] - nxt]
        out.append((row, c))
    return out


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.eye(len(w)) * L2
    reg[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        w -= np.linalg.solve(hess, grad)
    return w


def logit(w: np.ndarray, f: list[float]) -> float:
    return float(w[0] + np.dot(w[1:], f))


def passed(cands, w, t: float, cap: int, ig: float, served=frozenset()) -> list[str]:
    scored = {id(c): logit(w, f) for f, c in features(cands)}
    ordered = sorted((c for c in cands if c[1] not in served), key=lambda c: (not c[3], -c[5]))

    def ok(c) -> bool:
        if c[2]:
            return c[0] >= ig
        if not c[3]:
            return c[0] >= STRONG
        return c[4] >= STRONG or scored[id(c)] >= t

    return [c[1] for c in ordered if ok(c)][:cap]


def evaluate(runs, w, t, cap, ig) -> tuple[float, float, float]:
    hits = inject = silent = silent_ok = injected = correct = 0
    for p, earlier, final in runs:
        served = frozenset(k for cands in earlier for k in passed(cands, w, t, cap, ig))
        got = passed(final, w, t, cap, ig, served)
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        injected += len(got)
        correct += sum(k in good for k in got)
        if p["kind"] == "inject":
            inject += 1
            hits += bool(set(p["expect"]) & (set(got) | served))
        else:
            silent += 1
            silent_ok += not got
    return hits / inject, correct / injected if injected else 1.0, silent_ok / silent


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / max(1, len(pos) * len(neg)))


def main(argv: list[str]) -> int:
    runs = json.loads(open(argv[0]).read())
    rows, labels = [], []
    for p, _earlier, final in runs:
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        for f, c in features(final):
            rows.append(f)
            labels.append(1.0 if c[1] in good else 0.0)
    x, y = np.array(rows), np.array(labels)
    w = fit(x, y)
    print(f"{len(y)} candidates, {int(y.sum())} right; weights (bias, g, cos, cos gap, g gap, top, margin): "
          + ", ".join(f"{v:.3f}" for v in w))
    print(f"AUC on dev: logistic {auc(x @ w[1:], y):.3f}, g {auc(x[:, 0], y):.3f}, cos {auc(x[:, 1], y):.3f}")
    grid = []
    for t in np.arange(-3.0, 3.01, 0.1):
        for cap in CAPS:
            for ig in IDENTITY_GATES:
                grid.append((*evaluate(runs, w, float(t), cap, ig), round(float(t), 2), cap, ig))
    ok = sorted((g for g in grid if g[1] >= 0.9 and g[2] >= 0.95), key=lambda g: (-g[0], -g[1], -g[2]))
    for h, pr, s, t, cap, ig in ok[:8]:
        print(f"logit >= {t:+.2f} cap {cap} identity gate {ig}: "
              f"hit {h:.3f} precision {pr:.3f} silence {s:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
