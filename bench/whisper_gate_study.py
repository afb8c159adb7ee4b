"""Which of whisper's gate inputs and hand-set rules earn their place, judged by the grouped estimate (issue 11).

    python -m bench.whisper_gate_study /tmp/dev-gate.json --drop-one           # each input and rule left out
    python -m bench.whisper_gate_study /tmp/dev-gate.json --l2 0.1,0.3,1,3,10  # the L2 strength
    python -m bench.whisper_gate_study /tmp/dev-gate.json --keep g,cosine,best --fresh 4
                                                             # today's gate and a candidate on batch 4's prompts
    python -m bench.whisper_gate_study /tmp/dev-gate.json --new-data 6,club   # do batch 6 / the club help the rest?

The dump is bench.whisper_stores' `--gate-dump` of the dev split. Every variant is refitted and its operating point
chosen as bench/whisper_gate_fit.py chooses it (the grouped estimate: left out by batch and by store, each
measure's lower figure, against the targets), so a row says what the variant would give on prompts unlike the ones it
was fitted on. Log-loss (left out by batch, by store, and the FRESHEST batch's hits alone left out by batch: the newest
prompts the fit sees) moves less
than the hit rate from one prompt to the next;
an input that only one store has (`own_titled`, `overview`: project notes) cannot be learnt with that store left
out, so its worth shows by batch. The page rules live in whisper.stages.retrieve and are replayed here from each hit's recall probability.
`--fresh N` fits the candidate on the other batches only and scores it and whisper/conf.py's gate on batch N's
prompts (fresh to the candidate; to conf's gate only if it was fitted before batch N landed).
`--new-data B,S` asks whether a new batch B and a new store S teach the gate anything the others can use: every other
batch (store) is scored by a fit on the remaining ones with B's (S's) prompts in the training and without them.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np

from bench import whisper_gate_fit as gf

PAGE_CHARS = 1000


def unweigh_pages(dump: list[dict], *, lift: bool, penalty: bool) -> None:
    """Undo whisper's page weighing for the hits the dump records with their recall probability: a named page's
    lift (its g above recall's) and/or the penalty of a page outside the project (below recall's)."""
    for item in dump:
        for call in item["calls"]:
            for c in call or ():
                p = c.get("recall_p")
                if p is None or c.get("chars", 0) <= PAGE_CHARS or abs(c["g"] - p) < 1e-9:
                    continue
                if (lift and c["g"] > p) or (penalty and c["g"] < p):
                    c["g"] = c["score"] = p


RULES = ("strong cosine pass", "follow-up answer", "named-page lift", "page penalty")  # "+ strong cosine pass"


def variant(raw: str, rule: str | None):
    """The dump prepared with one rule off, or the strong cosine pass on (production dropped it; None: as production)."""
    gf.STRONG_PASS, gf.FOLLOW_UP_COSINE = rule == "strong cosine pass", (
        math.inf if rule == "follow-up answer" else 0.35)
    dump = json.loads(raw)
    if rule in ("named-page lift", "page penalty"):
        unweigh_pages(dump, lift=rule == "named-page lift", penalty=rule == "page penalty")
    return gf.prepared(dump, False)


EXTRAS: tuple[str, ...] = ()  # candidate inputs of bench/whisper_gate_extras.py named in --keep, after GATE_INPUTS


# The labelling round whose left-out log-loss an input must not worsen: the newest one the fit still sees, the one
# before bench/whisper_gate_fit.py's FRESH_BATCHES (never fitted, so never in a prepared dump); 17 while that is {18}.
FRESHEST = str(min(gf.FRESH_BATCHES) - 1)


def judge(dump: list[dict], keep: list[int], l2: float) -> tuple:
    """(threshold, grouped hit / precision / silence, log-loss left out by batch and by store and, left out by
    batch, on the FRESHEST batch's hits alone, in-sample minus grouped per measure)."""
    x, y, where = gf.rows(dump, EXTRAS)
    x = x[:, keep]
    est = gf.estimates(dump, x, y, where, l2, by_prompt=False)
    cur = gf.curves(dump, est)
    t = gf.operating_point(cur["grouped"])
    if t is None:  # nothing reaches the targets: the most precise point
        t = max(cur["grouped"], key=lambda k: (cur["grouped"][k][1], cur["grouped"][k][0]))
    loss = [gf.log_loss(est[by], y, where) for by in gf.GROUPINGS]
    fresh_rows = [j for j, w in enumerate(where) if str(dump[w[0]]["prompt"].get("batch", 1)) == FRESHEST]
    loss.append(gf.log_loss(est["batch"], y[fresh_rows], [where[j] for j in fresh_rows]) if fresh_rows else math.nan)
    return t, cur["grouped"][t], loss, tuple(a - b for a, b in zip(cur["in sample"][t], cur["grouped"][t]))


def row(name: str, result: tuple) -> str:
    t, (h, p, s), loss, opt = result
    return (f"| {name} | {t:+.1f} | {h:.3f} / {p:.3f} / {s:.3f} | {loss[0]:.4f} / {loss[1]:.4f} / {loss[2]:.4f} | "
            + " / ".join(f"{v:+.3f}" for v in opt) + " |")


HEADER = ("| variant | log-odds >= | grouped hit / precision / silence | log-loss by batch / store / batch 5 | optimism |\n"
          "|---|---:|---|---:|---|")


def drop_one(raw: str, keep: list[int], names: list[str], l2: float) -> None:
    print(HEADER)
    base = variant(raw, None)
    print(row("as chosen", judge(base, keep, l2)))
    for i in keep:
        print(row(f"- {names[i]}", judge(base, [k for k in keep if k != i], l2)))
    for rule in RULES:
        print(row(f"{'+' if rule == 'strong cosine pass' else '-'} {rule}", judge(variant(raw, rule), keep, l2)))
    variant(raw, None)


def fresh(raw: str, keep: list[int], l2: float, batch: str) -> None:
    """whisper/conf.py's weights and threshold, and the candidate (`keep`, `l2`, chosen by the grouped estimate on
    the other batches), on batch `batch`'s prompts."""
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    dump = variant(raw, None)
    old = [item for item in dump if str(item["prompt"].get("batch", 1)) != batch]
    new = [item for item in dump if str(item["prompt"].get("batch", 1)) == batch]
    if not new:
        print(f"no prompt of batch {batch} in the dump")
        return
    x, y, where = gf.rows(old, EXTRAS)
    w = gf.fit(x[:, keep], y, l2)
    t = judge(old, keep, l2)[0]
    fx, _, fwhere = gf.rows(new, EXTRAS)
    base = len(GATE_WEIGHTS) - 1
    today = {k: float(GATE_WEIGHTS[0] + fx[j, :base] @ np.array(GATE_WEIGHTS[1:])) for j, k in enumerate(fwhere)}
    cand = {k: float(w[0] + fx[j, keep] @ w[1:]) for j, k in enumerate(fwhere)}
    inject = sum(item["prompt"]["kind"] == "inject" for item in new)
    print(f"batch {batch}: {len(new)} prompts ({inject} inject, {len(new) - inject} silent); the candidate never saw "
          "them, whisper/conf.py's gate did if it was fitted after they landed")
    for name, logits, at in (("whisper/conf.py's gate", today, GATE_LOGIT), ("candidate", cand, t)):
        (h, p, s), cats = gf.evaluate(new, logits, at, categories=True)
        print(f"  {name} at log-odds >= {at:+.2f}: hit {h:.3f} precision {p:.3f} silence {s:.3f}; "
              + ", ".join(f"{c} {r}/{n}" for c, (r, n) in cats.items()))
    print("  candidate weights (bias, kept inputs): " + ", ".join(f"{v:.3f}" for v in w))


def held_out(dump: list[dict], keep: list[int], l2: float, by: str, extra: str) -> tuple[dict, dict]:
    """Every hit of a group other than `extra` (grouped `by` batch or store) scored by a fit on the other groups,
    once with `extra`'s hits in the training and once without: (log-odds with, log-odds without)."""
    x, y, where = gf.rows(dump, EXTRAS)
    x = x[:, keep]
    groups = np.array([gf.group_of(dump[w[0]]["prompt"], by) for w in where])
    with_, without = {}, {}
    for g in sorted(set(groups) - {extra}):
        for out, train in ((with_, groups != g), (without, (groups != g) & (groups != extra))):
            w = gf.fit(x[train], y[train], l2)
            out |= {k: float(w[0] + x[j] @ w[1:]) for j, k in enumerate(where) if groups[j] == g}
    return with_, without


def new_data(raw: str, keep: list[int], l2: float, spec: str) -> None:
    """--new-data B,S: the prompts of the other batches (stores) at today's threshold and at 0.80."""
    from whisper.conf import GATE_LOGIT

    dump = variant(raw, None)
    batch, _, store = spec.partition(",")
    for by, extra in (("batch", batch), ("store", store)):
        if not extra:
            continue
        rest = [item for item in dump if gf.group_of(item["prompt"], by) != extra]
        if len(rest) == len(dump):
            print(f"no prompt of {by} {extra} in the dump")
            continue
        index = {id(item): i for i, item in enumerate(rest)}
        place = {pi: index[id(item)] for pi, item in enumerate(dump) if id(item) in index}
        for name, logits in zip(("with", "without"), held_out(dump, keep, l2, by, extra)):
            moved = {(place[k[0]], k[1], k[2]): v for k, v in logits.items()}
            print(f"each {by} but {extra} held out, {name} {by} {extra} in the fit: " + "; ".join(
                f"log-odds >= {t:+.2f} " + " / ".join(f"{v:.3f}" for v in gf.evaluate(rest, moved, t))
                for t in (GATE_LOGIT, 0.8)))


def main(argv: list[str]) -> int:
    from whisper.stages.gate import GATE_INPUTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", help="the file bench.whisper_stores --gate-dump wrote (dev split)")
    parser.add_argument("--keep", default=",".join(GATE_INPUTS), help="the inputs the gate uses, comma-separated")
    parser.add_argument("--l2", default=str(gf.L2), help="the L2 strength, or several comma-separated")
    parser.add_argument("--drop-one", action="store_true", help="refit with each input and each rule left out")
    parser.add_argument("--fresh", help="a batch: fit on the others, score today's gate and the candidate on it")
    parser.add_argument("--new-data", help="BATCH,STORE: score the other batches (stores) held out, fitted with and "
                        "without that batch's (store's) prompts")
    args = parser.parse_args(argv)
    global EXTRAS
    from bench.whisper_gate_extras import EXTRAS as ON_SHELF

    EXTRAS = tuple(n for n in args.keep.split(",") if n in ON_SHELF and n not in GATE_INPUTS)
    names = list(GATE_INPUTS) + list(EXTRAS)
    keep = [names.index(n) for n in args.keep.split(",") if n]
    raw = open(args.dump).read()
    strengths = [float(v) for v in args.l2.split(",")]
    if args.new_data:
        new_data(raw, keep, strengths[0], args.new_data)
    elif args.fresh:
        fresh(raw, keep, strengths[0], args.fresh)
    elif args.drop_one:
        drop_one(raw, keep, names, strengths[0])
    else:
        print(HEADER)
        base = variant(raw, None)
        for l2 in strengths:
            print(row(f"L2 {l2}", judge(base, keep, l2)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
