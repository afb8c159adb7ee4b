"""Fit whisper's logistic gate on what reaches the gate on the dev split (issue 11, item 9).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json   # production path and settings
    python -m bench.whisper_gate_fit /tmp/dev-gate.json                          # weights and operating point
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --inputs long            # with a candidate input (EXTRAS)
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --open-overlap --inputs overlap  # recall hits skip overlap
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --page-penalty 0.5       # pages re-weighed offline

The dump holds, per dev prompt and per whisper call (history prompts first), every candidate that reached the gate
with the gate's own inputs (whisper.stages.gate.gate_inputs): the fit sees what production sees. A logistic model
(numpy, L2, Newton steps) is fitted on "expected or accepted memory" over recall's hits outside the identity route,
and scored in sample, out of fold by prompt (5 folds, 3 shuffles) and grouped: left out by batch and by store
(docs, lifelog, devprojects, prompts about nothing stored). The operating point is the threshold with the highest
grouped hit rate where grouped precision (each measure's lower figure of the two groupings) is >= 0.9 and silence
>= 0.95 (`--margin` asks more), applied as production does (identity gate, strong cosine, a standout only when the
gate passed nothing, a hit let through on its standing, the focus stage, already served, cap; a broad recap skips the
gate and the focus stage), so today's weights on a fresh dump give the figures of `python -m bench.whisper_stores
--split dev` (a dump made before session 24 lacks `standing`: its standing hits are judged by their log-odds).
Optimism: in sample minus grouped; bench/whisper_gate_study.py
drops inputs and rules one by one. Prints the numbers for whisper/conf.py (GATE_WEIGHTS, GATE_LOGIT); the candidate
inputs of `--inputs` (measured, not kept) are in bench/whisper_gate_extras.py.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict

import numpy as np

from bench.prompt_groups import group_of  # re-exported: the benches read gf.group_of
from bench.roc import roc_auc
from bench.whisper_gate_extras import EXTRAS, LONG_CHARS

L2, CAP = 1.0, 2  # the fit's ridge penalty; whisper's cap on memories per prompt
IDENTITY_GATE, IDENTITY_GATE_NO_WORD = 0.25, 0.35  # identity cosine gates (whisper/conf.py): shared word, no word
PREFERENCE_GATE, PREFERENCE_GATE_NO_WORD = 0.35, 0.45  # the preference route's, the same way
FOLLOW_UP_COSINE = 0.35  # whisper/conf.py follow_up_cosine, not fitted here
STRONG = 0.70  # a recall hit with this raw cosine passes on its own (the overlap filter's cosine floor)
STRONG_PASS = False  # True: a recall hit at STRONG passes the logistic gate whatever its log-odds (before session 12)
FOLDS, SHUFFLES = 5, (0, 1, 2)
FRESH_BATCHES = frozenset({18})  # measured fresh by the lead, never fitted (and in bench/scorer_pools.py); 17 is fit data


def gate_inputs(call: list[dict]) -> None:
    """whisper.stages.gate.gate_inputs over a call's logistic rows, from their g and cosine (in place); the answer
    evidence (thing_missing, memory_cover: whisper.stages.gate.evidence_inputs) and prompt_words are kept as the dump
    holds them (a hit the overlap filter dropped has none: 0 for each)."""
    hits = [c for c in call if c["route"] == "logistic"]
    ranked = sorted((c["g"] for c in hits), reverse=True)
    for c in hits:
        rank = ranked.index(c["g"])
        nxt = ranked[rank + 1] if rank + 1 < len(ranked) else 0.0
        c["inputs"] = [c["g"], c["cosine"], float(rank == 0), c["g"] - nxt, c.get("own_titled", 0.0),
                       float(c.get("type") == "project"), *(list((c.get("inputs") or ())[6:9]) + [0.0] * 3)[:3]]
        # the evidence and the prompt's length as dumped


def reweigh_pages(dump: list[dict], penalty: float, dumped: float, outside: float | None = None) -> None:
    """Re-weigh every page's g and score as whisper.stages.retrieve.page_probability would with `penalty` log-odds
    per e-fold instead of `dumped` (the value the dump was made with; affinity is 0 in the bench). Candidates the
    floor dropped before the gate stay out (a smaller penalty raises pages, so a few may be missing). `outside`:
    another penalty for prompts asked outside any project."""
    for item in dump:
        for call in item["calls"]:
            for c in call or ():
                if c["route"] not in ("logistic", "no_overlap", "served") or c["chars"] <= LONG_CHARS:
                    continue
                if c["space"] == c["target"] or not 0.0 < c["g"] < 1.0:
                    continue
                new = penalty if outside is None or c["target"] is not None else outside
                z = math.log(c["g"] / (1.0 - c["g"])) + (dumped - new) * math.log(c["chars"] / LONG_CHARS)
                c["g"] = c["score"] = 1.0 / (1.0 + math.exp(-z))


def prepared(dump: list[dict], open_overlap: bool, served_out: bool = False) -> list[dict]:
    """The dump as production judged it (recall hits the overlap filter dropped left out), or with that filter
    open for recall hits: they reach the logistic gate too. `served_out`: hits the session was already served (in
    the agent's context, dropped after the gate) are not among the hits the others are measured against (route
    "served"). Every hit's inputs are recomputed from its g and cosine (as whisper.stages.gate.gate_inputs).
    Prompts of a batch in FRESH_BATCHES are left out (a dev dump made once such a batch is in whisper.json)."""
    dump = [item for item in dump if item["prompt"].get("batch", 1) not in FRESH_BATCHES]
    for item in dump:
        for i, call in enumerate(item["calls"]):
            if call is None:
                continue
            for c in call:
                if c.get("served") and c["route"] == "logistic" and served_out:
                    c["route"] = "served"
                if c["route"] == "no_overlap" and open_overlap:
                    c["route"] = "logistic"
            item["calls"][i] = call = [c for c in call if c["route"] != "no_overlap"] or None
            if call:
                gate_inputs(call)
    return dump


BY_LOGIT = False  # --by-logit: arrange orders the logistic gate's hits by their log-odds, not recall's score
SECOND_LOGIT: float | None = None  # a logistic-route memory after the first needs these log-odds (None: the gate's)


def rows(dump: list[dict], extras: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
    """The logistic gate's inputs of every hit it judged (history calls too), their labels and their places."""
    x, y, where = [], [], []
    for pi, item in enumerate(dump):
        p = item["prompt"]
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        for ci, call in enumerate(item["calls"]):
            for k, c in enumerate(call or ()):
                if c["route"] == "logistic":
                    x.append(list(c["inputs"]) + [EXTRAS[name](c, call) for name in extras])
                    y.append(1.0 if c["key"] in good else 0.0)
                    where.append((pi, ci, k))
    return np.array(x), np.array(y), where


def fit(x: np.ndarray, y: np.ndarray, l2: float | None = None) -> np.ndarray:
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.eye(len(w)) * (L2 if l2 is None else l2)
    reg[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        w -= np.linalg.solve(hess, grad)
    return w


def _follow_up_answer(call: list[dict], prompt: str) -> int | None:
    """As whisper.stages.gate._follow_up_answer: on a follow-up that asks something (whisper.asked.asks of the call's
    own prompt) and whose hits hold a served memory (as production served it when the dump was made), the index of
    the unserved hit with the highest min(cosine to the joined query, to the prompt alone) x its space factor when
    that reaches FOLLOW_UP_COSINE."""
    from whisper.asked import asks

    hits = [(k, c) for k, c in enumerate(call) if c["route"] in ("logistic", "served") and c.get("follow_up")]
    fresh = [(k, c) for k, c in hits if not c.get("served") and c.get("cos_alone") is not None]
    if not fresh or len(fresh) == len(hits) or not asks(prompt):
        return None

    def both(c: dict) -> float:
        return min(c["cos_alone"], c["cos_joined"]) * c.get("space_factor", 1.0)

    k, c = max(fresh, key=lambda kc: both(kc[1]))
    return k if both(c) >= FOLLOW_UP_COSINE else None


def _id_score(c: dict) -> float:
    """An identity-, preference- or cosine-route memory's gate score: its cosine x (0.4 + 0.6 confidence) x space factor
    (whisper.stages.gate.gate_score by cosine, "id_score" in the dump); a dump without it: the raw cosine."""
    return c.get("id_score", c["cosine"])


def passed(call: list[dict], logits: dict[int, float], t: float, served=frozenset(), prompt: str = "") -> list[str]:
    """What the gate, already_served and arrange would inject from one call's candidates at threshold t (`prompt`:
    the call's own prompt, which the follow-up route reads)."""
    def ok(k: int, c: dict) -> bool:
        if c["route"] == "identity":
            return _id_score(c) >= (IDENTITY_GATE if c.get("overlap", True) else IDENTITY_GATE_NO_WORD)
        if c["route"] == "preference":
            return _id_score(c) >= (PREFERENCE_GATE if c.get("overlap", True) else PREFERENCE_GATE_NO_WORD)
        if c["route"] == "cosine":
            return _id_score(c) >= STRONG
        if c["route"] == "served":
            return False
        return (STRONG_PASS and c["cosine"] >= STRONG) or logits[k] >= t

    if call and call[0].get("recap"):  # a broad recap skips the gate and the focus stage: newest first, capped
        kept = sorted((c for c in call if c["key"] not in served),
                      key=lambda c: (c.get("space_factor", 1.0), c.get("created", "")), reverse=True)
        return [c["key"] for c in kept[:CAP]]
    follow = _follow_up_answer(call, prompt)
    kept = [(k, c) for k, c in enumerate(call) if ok(k, c) or k == follow]
    # As the gate's _best_identity_only: identity-route memories below `share` x the best one's stay out.
    best = max((_id_score(c) for _, c in kept if c["route"] in ("identity", "preference")), default=0.0)
    kept = [(k, c) for k, c in kept
            if c["route"] not in ("identity", "preference") or _id_score(c) >= c.get("share", 0.0) * best]
    # whisper.conventions.standout_gate: a standout the gate did not pass joins only when the gate passed nothing
    # (silence2, session 24); then gate._standing_gate: a hit the overlap filter let through on its standing passes.
    inside = {k for k, _ in kept}
    if not kept:
        kept = [(k, c) for k, c in enumerate(call) if c.get("standout") and c["route"] != "served"]
        inside = {k for k, _ in kept}
    kept += [(k, c) for k, c in enumerate(call)
             if k not in inside and c.get("standing") is not None and c["route"] == "logistic"]
    # Then as focus_check (whisper.stages.focus: off-focus memories are dropped after the gate) and already_served.
    kept = [(k, c) for k, c in kept if c["key"] not in served and not c.get("off_focus")]
    if BY_LOGIT:  # recall's hits first, by the gate's log-odds (identity memories by score)
        kept.sort(key=lambda kc: (not kc[1]["recall"], -logits[kc[0]] if kc[1]["route"] == "logistic"
                                  else -kc[1]["score"]))
    else:  # as arrange: recall's hits first, by score
        kept.sort(key=lambda kc: (not kc[1]["recall"], -kc[1]["score"]))
    if SECOND_LOGIT is not None:  # bench/whisper_gate_operating.py: the second memory's own threshold
        kept = kept[:1] + [(k, c) for k, c in kept[1:] if c["route"] != "logistic" or c.get("standout")
                           or k == follow or logits[k] >= SECOND_LOGIT]
    kept = [c for _, c in kept]
    return [c["key"] for c in kept[:CAP]]


def replay(item: dict, pi: int, logits: dict[tuple, float], t: float) -> tuple[set[str], list[str]]:
    """One dumped prompt (index `pi`) replayed at threshold t as bench.whisper_stores.run_one serves it: (what its
    history's calls injected, what its own last call injects, the history's memories counting as served)."""
    calls = item["calls"]
    texts = list(item["prompt"].get("history", ())) + [item["prompt"]["prompt"]]  # each call's own prompt
    served: set[str] = set()
    got: list[str] = []
    for ci, call in enumerate(calls):
        lg = {k: logits.get((pi, ci, k), -99.0) for k in range(len(call or ()))}
        if ci < len(calls) - 1:
            served |= set(passed(call or [], lg, t, prompt=texts[ci]))
        else:
            got = passed(call or [], lg, t, frozenset(served), texts[-1])
    return served, got


def evaluate(dump: list[dict], logits: dict[tuple, float], t: float, categories: bool = False, keep=None, counts=False):
    """(hit rate, precision, silence) at threshold t, history served as in bench.whisper_stores.run_one (`keep`: only
    these prompts' indices; `counts`: hits, should inject, right injected, injected, silent kept, silent)."""
    hits = inject = silent = silent_ok = injected = correct = 0
    by_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pi, item in enumerate(dump):
        if keep is not None and pi not in keep:
            continue
        p = item["prompt"]
        served, got = replay(item, pi, logits, t)
        good = set(p.get("expect", [])) | set(p.get("accept", []))
        injected += len(got)
        correct += sum(k in good for k in got)
        if p["kind"] == "inject":
            inject += 1
            hit = bool(set(p["expect"]) & (set(got) | served))
            hits += hit
            right = hit and all(k in good for k in got)
        else:
            silent += 1
            right = not got
            silent_ok += right
        by_category[p["category"]][0] += right
        by_category[p["category"]][1] += 1
    if counts:
        return hits, inject, correct, injected, silent_ok, silent
    scores = (hits / inject, correct / injected if injected else 1.0, silent_ok / silent)
    return (scores, dict(sorted(by_category.items()))) if categories else scores


def out_of_fold(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, l2: float | None = None
                ) -> dict[tuple, float]:
    """Each hit's log-odds from models fitted without its prompt, averaged over the shuffles."""
    got: dict[tuple, list[float]] = defaultdict(list)
    for seed in SHUFFLES:
        order = list(range(len(dump)))
        random.Random(seed).shuffle(order)
        fold = {pi: i % FOLDS for i, pi in enumerate(order)}
        for f in range(FOLDS):
            train = np.array([fold[w[0]] != f for w in where])
            w = fit(x[train], y[train], l2)
            for j in np.where(~train)[0]:
                got[where[j]].append(float(w[0] + x[j] @ w[1:]))
    return {k: float(np.mean(v)) for k, v in got.items()}


# Grouped estimates. Out of fold by prompt fits on a prompt's siblings (same labelling round and store, one writer,
# same memories: shared phrasing and traps), and the inputs and rules were chosen by reading these rows. Test prompts
# are new phrasings; leaving out a whole batch or store comes nearer. Grouped: each measure's lower figure of the two.
GROUPINGS = ("batch", "store")
MARGIN = (0.9, 0.95)  # grouped precision and silence an operating point needs: the targets (--margin to ask more)
THRESHOLDS = [round(float(t), 2) for t in np.arange(-3.0, 3.01, 0.1)]


def out_of_group(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, by: str, l2: float | None = None
                 ) -> dict[tuple, float]:
    """Each hit's log-odds from the model fitted on every other group's prompts (leave one group out)."""
    groups = np.array([group_of(dump[w[0]]["prompt"], by) for w in where])
    out = {}
    for g in sorted(set(groups)):
        train = groups != g
        w = fit(x[train], y[train], l2)
        for j in np.where(~train)[0]:
            out[where[j]] = float(w[0] + x[j] @ w[1:])
    return out


def estimates(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list, l2: float | None = None,
              by_prompt: bool = True) -> dict[str, dict[tuple, float]]:
    """Every hit's log-odds in sample (the full fit), out of fold by prompt, and left out by batch and by store."""
    w = fit(x, y, l2)
    est = {"in sample": {k: float(w[0] + x[j] @ w[1:]) for j, k in enumerate(where)}}
    if by_prompt:
        est["prompt"] = out_of_fold(dump, x, y, where, l2)
    return est | {by: out_of_group(dump, x, y, where, by, l2) for by in GROUPINGS}


def curves(dump: list[dict], est: dict[str, dict]) -> dict[str, dict[float, tuple]]:
    """(hit rate, precision, silence) per threshold for each estimate, and "grouped": each measure's lower figure
    of the grouped estimates."""
    cur = {name: {t: evaluate(dump, logits, t) for t in THRESHOLDS} for name, logits in est.items()}
    cur["grouped"] = {t: tuple(min(cur[by][t][i] for by in GROUPINGS) for i in range(3)) for t in THRESHOLDS}
    return cur


def operating_point(curve: dict[float, tuple], precision: float = MARGIN[0], silence: float = MARGIN[1]
                    ) -> float | None:
    """The threshold with the highest hit rate among those reaching `precision` and `silence` (a tie: the
    higher threshold)."""
    ok = [(h, t) for t, (h, p, s) in curve.items() if p >= precision and s >= silence]
    return max(ok)[1] if ok else None


def log_loss(logits: dict[tuple, float], y: np.ndarray, where: list) -> float:
    z = np.clip(np.array([logits[k] for k in where]), -30, 30)
    return float(np.mean(np.logaddexp(0, z) - y * z))


def main(argv: list[str]) -> int:
    global BY_LOGIT, SHUFFLES
    from whisper.stages.gate import GATE_INPUTS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", help="the file bench.whisper_stores --gate-dump wrote (dev split)")
    parser.add_argument("--inputs", default="", help=f"extra candidate inputs, comma-separated: {', '.join(EXTRAS)}")
    parser.add_argument("--open-overlap", action="store_true",
                        help="recall hits the overlap filter dropped reach the gate too (inputs recomputed)")
    parser.add_argument("--served-out", action="store_true",
                        help="hits already served in the session do not set the best the others are measured against")
    parser.add_argument("--by-logit", action="store_true",
                        help="order the gate's hits by their log-odds before the cap, not by recall's score")
    parser.add_argument("--page-penalty", type=float,
                        help="re-weigh pages outside the prompt's project with this many log-odds per e-fold of "
                             "length (the dump holds whisper.stages.retrieve.PAGE_PENALTY's)")
    parser.add_argument("--page-penalty-outside", type=float,
                        help="with --page-penalty: the penalty for prompts asked outside any project")
    parser.add_argument("--shuffles", type=int, default=len(SHUFFLES),
                        help="how many shuffles of the folds to average (3; with 10 a point moves less between runs)")
    parser.add_argument("--l2", type=float, default=L2, help=f"the L2 strength ({L2})")
    parser.add_argument("--margin", type=lambda v: tuple(float(x) for x in v.split(",")), default=MARGIN,
                        help="the grouped precision and silence the operating point needs (0.9,0.95)")
    parser.add_argument("--grid", action="store_true", help="also print every estimate per threshold")
    args = parser.parse_args(argv)
    BY_LOGIT, SHUFFLES = args.by_logit, tuple(range(args.shuffles))
    extras, open_overlap = tuple(n for n in args.inputs.split(",") if n), args.open_overlap
    dump = json.loads(open(args.dump).read())
    if args.page_penalty is not None:
        from whisper.stages.retrieve import PAGE_PENALTY

        reweigh_pages(dump, args.page_penalty, PAGE_PENALTY, args.page_penalty_outside)
    dump = prepared(dump, open_overlap, args.served_out)
    x, y, where = rows(dump, extras)
    if len(set(y)) < 2:  # nothing to fit, and roc_auc would be NaN: every judged hit right, or every one wrong
        print(f"{len(y)} hits judged, {int(y.sum())} right: the fit needs right and wrong hits", file=sys.stderr)
        return 2
    w = fit(x, y, args.l2)
    est = estimates(dump, x, y, where, args.l2)
    cur = curves(dump, est)
    print(f"{len(y)} hits judged, {int(y.sum())} right; L2 {args.l2}; weights (bias, "
          f"{', '.join(GATE_INPUTS + extras)}): " + ", ".join(f"{v:.3f}" for v in w))
    print("AUC / log-loss: " + "; ".join(f"{name} {roc_auc(np.array([lg[k] for k in where]), y):.3f} / "
                                        f"{log_loss(lg, y, where):.3f}" for name, lg in est.items()))
    t = operating_point(cur["grouped"], *args.margin)
    if t is None:
        print(f"no threshold reaches grouped precision {args.margin[0]} and silence {args.margin[1]}")
        return 1
    print(f"operating point (grouped, precision >= {args.margin[0]}, silence >= {args.margin[1]}): log-odds >= {t:+.2f}")
    print("| estimate | hit | precision | silence |\n|---|---|---|---|")
    for name, curve in cur.items():
        print(f"| {name} | " + " | ".join(f"{v:.3f}" for v in curve[t]) + " |")
    print("optimism (in sample - grouped): " + ", ".join(
        f"{m} {a - b:+.3f}" for m, a, b in zip(("hit", "precision", "silence"), cur["in sample"][t], cur["grouped"][t])))
    for by in GROUPINGS:
        print(f"  fully right per category, left out by {by}: " + ", ".join(
            f"{c} {r}/{n}" for c, (r, n) in evaluate(dump, est[by], t, categories=True)[1].items()))
    old = operating_point(cur["prompt"], 0.9, 0.95)
    if old is not None:
        print(f"the per-prompt choice (out of fold by prompt, 0.9 / 0.95): {old:+.2f}, grouped there "
              + " / ".join(f"{v:.3f}" for v in cur["grouped"][old]))
    if not extras and not open_overlap and not args.served_out:
        from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

        held = np.array(GATE_WEIGHTS[1:] + (0.0,) * (x.shape[1] + 1 - len(GATE_WEIGHTS)))  # an input it lacks: 0
        today = {k: float(GATE_WEIGHTS[0] + x[j] @ held) for j, k in enumerate(where)}
        print("today's weights on this dump at log-odds >= {:+.2f}: hit {:.3f} precision {:.3f} silence {:.3f}".format(
            GATE_LOGIT, *evaluate(dump, today, GATE_LOGIT)))
    if args.grid:
        print("| log-odds >= | " + " | ".join(cur) + " |\n|---:|" + "---|" * len(cur))
        for g in THRESHOLDS[25:41]:
            print(f"| {g:+.1f} | " + " | ".join(" / ".join(f"{v:.3f}" for v in c[g]) for c in cur.values()) + " |")
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
