"""Whisper gate's operating point held out by batch, and the second memory (issue 11, session 21, item 3).

    python -m bench.whisper_gate_trees /tmp/dev-gate.json --operating

The rules are bench/whisper_gate_trees.py's docstring, items 3a-3d (written down before any figure). Log-odds are
today's weights (whisper/conf.py GATE_WEIGHTS, fitted on dev 1-8: in sample there, so each fold's training batches
flatter them) and, beside them, the nine-input refit's left-out log-odds (every batch scored by the fit on the
others: no batch in sample)."""

from __future__ import annotations

import numpy as np

from bench import whisper_gate_fit as gf
from bench import whisper_gate_lobo as lobo

TARGET = (0.85, 0.9)  # held-out precision and silence the operating point should keep
STEPS = [round(0.05 * i, 2) for i in range(41)]  # the second memory's log-odds over the gate's: 0 to 2.0


def reaches(c: tuple, target: tuple[float, float] = TARGET) -> bool:
    h, n, r, i, s, m = c
    return r / max(i, 1) >= target[0] - 1e-9 and s / max(m, 1) >= target[1] - 1e-9


def operating(dump, x, y, where, groups, today: np.ndarray, today_t: float) -> int:
    from bench.whisper_gate_trees import NINE, lobo_run, trainer

    batches = sorted(set(groups), key=int)
    prompts = {b: frozenset(i for i, item in enumerate(dump) if gf.group_of(item["prompt"], "batch") == b)
               for b in batches}
    refit = np.full(len(y), np.nan)  # nine:1, every batch left out
    for b in batches:
        m = groups != b
        refit[~m] = trainer("nine:1")(x[m], y[m], groups[m])(x[~m])
    grid = [t for t in lobo.GRID if -0.5 <= t <= 1.5 and (abs(t * 10 - round(t * 10)) < 1e-6 or t == today_t)]
    for name, z in (("today's weights", today), ("nine:1 left out", refit)):
        lg = lobo.as_dict(z, where)
        print(f"\n3a. {name}: one threshold everywhere; held-out batches summed, and the folds whose batch reaches "
              f"precision {TARGET[0]} and silence {TARGET[1]}\n| log-odds >= | hit / precision / silence | folds |"
              f"\n|---:|---|---:|")
        per = {t: {b: gf.evaluate(dump, lg, t, keep=prompts[b], counts=True) for b in batches} for t in grid}
        for t in grid:
            total = tuple(int(v) for v in np.sum(list(per[t].values()), axis=0))
            print(f"| {t:+.2f} | {lobo.figures(total)} | {sum(reaches(c) for c in per[t].values())} / {len(batches)} |")
        print(f"\n3b. {name}: per batch, the lowest threshold at which it reaches both (oracle), hits there against "
              f"{today_t:+.2f}\n| batch | at {today_t:+.2f} | lowest threshold reaching both | there |\n|---|---|---:|---|")
        for b in batches:
            ok = [t for t in lobo.GRID if reaches(gf.evaluate(dump, lg, t, keep=prompts[b], counts=True))]
            t = min(ok) if ok else None
            there = lobo.figures(gf.evaluate(dump, lg, t, keep=prompts[b], counts=True)) if t is not None else "-"
            print(f"| {b} | {lobo.figures(gf.evaluate(dump, lg, today_t, keep=prompts[b], counts=True))} | "
                  f"{'none' if t is None else f'{t:+.2f}'} | {there} |")
    # 3c: the threshold chosen on the ten training batches for the fixed targets
    today_d = lobo.as_dict(today, where)
    shifted = np.full(len(y), np.nan)
    chosen = []
    for b in batches:
        keep = frozenset().union(*(prompts[r] for r in batches if r != b))
        t = lobo.choose(dump, today_d, keep, TARGET)
        chosen.append(t)
        shifted[groups == b] = today[groups == b] - t
    print(f"\n3c. the threshold with the most hits whose pooled precision >= {TARGET[0]} and silence >= {TARGET[1]} on "
          f"the ten other batches\n| gate | thresholds | LOBO hit / precision / silence |\n|---|---|---|")
    print(f"| today's at {today_t:+.2f} | {today_t:+.2f} | "
          f"{lobo.figures(gf.evaluate(dump, today_d, today_t, counts=True))} |")
    print(f"| today's weights, 3c | {' '.join(f'{t:+.2f}' for t in chosen)} | "
          f"{lobo.figures(gf.evaluate(dump, lobo.as_dict(shifted, where), 0.0, counts=True))} |")
    sh, _, ch = lobo_run(dump, x, y, where, groups, trainer("nine:1"), today, today_t, floor=TARGET)
    print(f"| nine:1, 3c (inner LOBO) | {' '.join(f'{t:+.2f}' for t in ch.values())} | "
          f"{lobo.figures(gf.evaluate(dump, lobo.as_dict(sh, where), 0.0, counts=True))} |")
    second(dump, today_d, today_t, prompts, batches)
    print(f"\nWhere the unanswered should-inject prompts' expected memories are (today's gate at {today_t:+.2f}): "
          + ", ".join(f"{k} {v}" for k, v in headroom(dump, today_d, today_t).items()))
    return 0


def pairs(dump, logits: dict, t: float) -> dict[str, int]:
    """Over the prompts' last calls: whispered two with the first right, of those the second wrong, the second the
    expected memory when the first is only accepted or wrong."""
    out = {"two": 0, "first right": 0, "second wrong": 0, "second right": 0, "first wrong": 0,
           "first wrong, second expected": 0}
    for pi, item in enumerate(dump):
        p = item["prompt"]
        served, got = gf.replay(item, pi, logits, t)
        if len(got) < 2:
            continue
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        out["two"] += 1
        if got[0] in good:
            out["first right"] += 1
            out["second wrong" if got[1] not in good else "second right"] += 1
        else:
            out["first wrong"] += 1
            out["first wrong, second expected"] += got[1] in set(p.get("expect", []))
    return out


def second(dump, today_d: dict, today_t: float, prompts: dict, batches: list[str]) -> None:
    print(f"\n3d. the second memory at {today_t:+.2f}: " + ", ".join(f"{k} {v}" for k, v in
                                                                pairs(dump, today_d, today_t).items()))
    chosen, total = [], np.zeros(6, dtype=int)
    try:
        for b in batches:
            keep = frozenset().union(*(prompts[r] for r in batches if r != b))
            gf.SECOND_LOGIT = None
            _, p0, s0 = gf.evaluate(dump, today_d, today_t, keep=keep)
            best = None
            for d in STEPS:
                gf.SECOND_LOGIT = today_t + d
                h, p, s = gf.evaluate(dump, today_d, today_t, keep=keep)
                if p >= p0 - 1e-9 and s >= s0 - 1e-9 and (best is None or (h, d) >= best):
                    best = (h, d)
            gf.SECOND_LOGIT = today_t + best[1]
            chosen.append(best[1])
            total += np.array(gf.evaluate(dump, today_d, today_t, keep=prompts[b], counts=True))
        print(f"| second memory | its log-odds over the gate's, per fold | LOBO hit / precision / silence |\n|---|---|---|")
        gf.SECOND_LOGIT = None
        print(f"| as the first | 0 | {lobo.figures(gf.evaluate(dump, today_d, today_t, counts=True))} |")
        print(f"| by the rule 3d | {' '.join(f'+{d:.2f}' for d in chosen)} | {lobo.figures(tuple(total))} |")
        for d in (0.25, 0.5, 1.0, 2.0, 99.0):
            gf.SECOND_LOGIT = today_t + d
            print(f"| +{d:.2f} everywhere | | {lobo.figures(gf.evaluate(dump, today_d, today_t, counts=True))} |")
    finally:
        gf.SECOND_LOGIT = None


def headroom(dump, logits: dict, t: float) -> dict[str, int]:
    """Where each should-inject prompt the gate leaves unanswered (its last call, today's replay at t) has its
    expected memory: not among the calls' candidates at all; among them on another route; among the logistic gate's
    hits and first of them by log-odds (only the threshold stands between); or behind a wrong hit (a better ranking
    is needed, not a lower threshold). The log-odds margins a lower threshold would need are counted by band."""
    out = {"missed": 0, "not a candidate": 0, "another route": 0, "first by log-odds": 0, "behind a wrong hit": 0,
           "first, within 0.5": 0, "first, within 1.0": 0}
    for pi, item in enumerate(dump):
        p = item["prompt"]
        if p["kind"] != "inject":
            continue
        served, got = gf.replay(item, pi, logits, t)
        expect = set(p["expect"])
        if expect & (set(got) | served):
            continue
        out["missed"] += 1
        ci = len(item["calls"]) - 1
        call = item["calls"][ci] or []
        rows = [(logits.get((pi, ci, k), -99.0), c) for k, c in enumerate(call) if c["route"] == "logistic"]
        if not any(c["key"] in expect for c in call):
            out["not a candidate"] += 1
        elif not any(c["key"] in expect for _, c in rows):
            out["another route"] += 1
        else:
            best = max(z for z, c in rows if c["key"] in expect)
            if all(z <= best for z, c in rows if c["key"] not in expect):
                out["first by log-odds"] += 1
                out["first, within 0.5"] += best >= t - 0.5
                out["first, within 1.0"] += best >= t - 1.0
            else:
                out["behind a wrong hit"] += 1
    return out
