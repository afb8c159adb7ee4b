"""Rules on top of whisper's gate, replayed from a dev dump with the `para` record (session 19; none kept).

    python -m bench.whisper_gate_para DUMP PARA                 # adds cos_z, csls, ... per hit
    python -m bench.whisper_gate_rules PARA standout            # a whole-scope standout past the overlap filter
    python -m bench.whisper_gate_rules PARA near                # a near-gate pass on standing (cos_z, csls)
    python -m bench.whisper_gate_rules PARA search              # weights searched for the decision, by batch
    python -m bench.whisper_gate_rules PARA routes              # the identity and preference routes' gates

Every figure is hit / precision / silence of bench.whisper_gate_fit.evaluate at whisper/conf.py's GATE_LOGIT, today's
weights unless searched; FRESH_BATCHES are out (bench.whisper_gate_fit.prepared). docs/benchmarks.md, "Whisper gate,
session 19".
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from bench import whisper_gate_fit as gf
from bench.whisper_gate_refit import logits_of, per_batch


def fig(v) -> str:
    return " / ".join(f"{a:.3f}" for a in v)


def admit_standouts(dump: list[dict], threshold: float | None) -> int:
    """In place, on a raw dump: in each call, the recall hit (reaching the gate or dropped by the overlap filter)
    with the highest `cos_z`, when the overlap filter dropped it and its cos_z reaches `threshold`, joins the gate's
    hits and passes (marked as a standout, which bench.whisper_gate_fit.passed lets through). Returns how many."""
    n = 0
    for item in dump:
        for call in item["calls"]:
            rec = [c for c in call or () if c["route"] in ("logistic", "no_overlap") and "para" in c]
            if not rec or threshold is None:
                continue
            top = max(rec, key=lambda c: c["para"]["cos_z"])
            if top["route"] == "no_overlap" and top["para"]["cos_z"] >= threshold:
                top["route"], top["standout"] = "logistic", True
                n += 1
    return n


def _today(dump: list[dict]) -> dict[tuple, float]:
    from whisper.conf import GATE_WEIGHTS

    x, _, where = gf.rows(dump)
    return logits_of(np.array(GATE_WEIGHTS), x, where)


def _batches(dump: list[dict]) -> list[str]:
    return sorted({gf.group_of(item["prompt"], "batch") for item in dump}, key=int)


def _sub(dump: list[dict], logits: dict[tuple, float], keep: set[str]) -> tuple[list[dict], dict[tuple, float]]:
    idx = [i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") in keep]
    pos = {i: n for n, i in enumerate(idx)}
    return [dump[i] for i in idx], {(pos[p], c, k): v for (p, c, k), v in logits.items() if p in pos}


def standout(raw: str, t: float) -> None:
    base = gf.prepared(json.loads(raw), False)
    lg0 = _today(base)
    print("today's gate " + fig(gf.evaluate(base, lg0, t)))
    runs = {}
    for threshold in (3.5, 4.0, 4.5, 5.0, 5.5, 6.0):
        dump = json.loads(raw)
        n = admit_standouts(dump, threshold)
        dump = gf.prepared(dump, False)
        runs[threshold] = (dump, _today(dump))
        print(f"cos_z >= {threshold}: {n} admitted, " + fig(gf.evaluate(*runs[threshold], t)))
    for b in _batches(base):
        train = set(_batches(base)) - {b}
        floor = gf.evaluate(*_sub(base, lg0, train), t)
        ok = []
        for threshold, (dump, lg) in runs.items():
            f = gf.evaluate(*_sub(dump, lg, train), t)
            if f[0] > floor[0] and f[1] >= floor[1] - 1e-9 and f[2] >= floor[2] - 1e-9:
                ok.append((f[0], threshold))
        chosen = max(ok)[1] if ok else None
        after = gf.evaluate(*_sub(*runs[chosen], {b}), t) if chosen else gf.evaluate(*_sub(base, lg0, {b}), t)
        print(f"  batch {b} left out: T {chosen}, {fig(gf.evaluate(*_sub(base, lg0, {b}), t))} -> {fig(after)}")


def near(raw: str, t: float) -> None:
    dump = gf.prepared(json.loads(raw), False)
    base = _today(dump)
    print("today's gate " + fig(gf.evaluate(dump, base, t)))
    by_call: dict[tuple, list] = {}
    for (pi, ci, k), v in base.items():
        by_call.setdefault((pi, ci), []).append((v, k))
    for key, levels in (("cos_z", (3.0, 3.5, 4.0, 4.5, 5.0)), ("csls", (0.1, 0.15, 0.2, 0.25, 0.3))):
        for low in (-0.5, -1.0, -1.5, -2.0):
            for z in levels:
                out = dict(base)
                for (pi, ci), hits in by_call.items():
                    v, k = max(hits)
                    if low <= v < t and dump[pi]["calls"][ci][k].get("para", {}).get(key, -9.0) >= z:
                        out[(pi, ci, k)] = 99.0
                print(f"{key} >= {z}, log-odds >= {low}: " + fig(gf.evaluate(dump, out, t)))


def search(raw: str, t: float) -> None:
    from whisper.conf import GATE_WEIGHTS

    dump = gf.prepared(json.loads(raw), False)
    x, _, where = gf.rows(dump)
    w0 = np.array(GATE_WEIGHTS)

    def ev(w: np.ndarray, keep: set[str]) -> tuple:
        return gf.evaluate(*_sub(dump, logits_of(w, x, where), keep), t)

    def walk(keep: set[str]) -> np.ndarray:
        f0 = ev(w0, keep)
        score = lambda f: f[0] - 5 * (max(0, f0[1] - f[1]) + max(0, f0[2] - f[2]))  # noqa: E731
        w, best = w0.copy(), score(f0)
        for _ in range(3):
            moved = False
            for i in range(len(w)):
                for step in (0.5, -0.5, 0.25, -0.25, 0.1, -0.1):
                    cand = w.copy()
                    cand[i] += step * (1.0 if i == 0 else max(abs(w0[i]), 0.5))
                    s = score(ev(cand, keep))
                    if s > best + 1e-9:
                        best, w, moved = s, cand, True
            if not moved:
                break
        return w

    started = time.process_time()
    for b in _batches(dump):
        w = walk(set(_batches(dump)) - {b})
        print(f"batch {b} left out: {fig(ev(w0, {b}))} -> {fig(ev(w, {b}))}; weights "
              + ", ".join(f"{v:.2f}" for v in w))
    print(f"{time.process_time() - started:.1f} s CPU")


def routes(raw: str, t: float) -> None:
    dump = gf.prepared(json.loads(raw), False)
    lg = _today(dump)
    for gates in ((0.35, 0.45, 0.25, 0.35), (0.30, 0.45, 0.25, 0.35), (0.25, 0.45, 0.25, 0.35),
                  (0.35, 0.40, 0.25, 0.35), (0.35, 0.45, 0.20, 0.35), (0.35, 0.45, 0.25, 0.30),
                  (0.35, 0.45, 0.25, 0.20)):
        gf.PREFERENCE_GATE, gf.PREFERENCE_GATE_NO_WORD, gf.IDENTITY_GATE, gf.IDENTITY_GATE_NO_WORD = gates
        print(f"preference {gates[0]} / {gates[1]}, identity {gates[2]} / {gates[3]}: " + fig(gf.evaluate(dump, lg, t))
              + " | " + "; ".join(per_batch(dump, lg, t)))


def main(argv: list[str]) -> int:
    from whisper.conf import GATE_LOGIT

    if len(argv) != 2 or argv[1] not in ("standout", "near", "search", "routes"):
        print(__doc__)
        return 2
    raw = open(argv[0]).read()
    {"standout": standout, "near": near, "search": search, "routes": routes}[argv[1]](raw, GATE_LOGIT)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
