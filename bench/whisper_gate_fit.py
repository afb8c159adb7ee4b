"""Fit whisper's logistic gate on what reaches the gate on the dev split (issue 11, item 9).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json   # production path and settings
    python -m bench.whisper_gate_fit /tmp/dev-gate.json                          # weights and operating point
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --inputs long            # with a candidate input (EXTRAS)
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --open-overlap --inputs overlap  # recall hits skip the
                                                                                 # overlap filter
    python -m bench.whisper_gate_fit /tmp/dev-gate.json --page-penalty 0.5       # pages re-weighed offline

The dump holds, per dev prompt and per whisper call (history prompts first), every candidate that reached the gate
with the gate's own inputs (whisper.stages.gate.gate_inputs), so the fit sees exactly what production sees: the
overlap filter and the other stages ran with their production settings. A logistic model (numpy, L2, Newton
steps) is fitted on "expected or accepted memory" over recall's hits outside the identity route. Its quality is
reported by cross-validation by prompt (5 folds, 3 shuffles; each prompt's logits come from a model that never saw
it), and the operating point is the threshold with the highest out-of-fold hit rate among those with precision >=
0.9 and silence >= 0.95, applied as production does (identity gate, strong cosine, the focus stage, already
served, cap; a broad recap skips the gate and the focus stage), so today's weights on a fresh dump give the figures
of `python -m bench.whisper_stores --split dev`. Prints the numbers for whisper/conf.py (GATE_WEIGHTS, GATE_LOGIT).
The dump also holds the prompt's content words with their document counts per space and the words each candidate
holds: the vocabulary inputs (`--inputs unknown_all`, ...; measured, not kept: docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
from collections import defaultdict

import numpy as np

L2 = 1.0
CAP = 2
IDENTITY_GATE = 0.25  # the identity route's cosine gates (whisper/conf.py), not fitted here: with a shared word,
IDENTITY_GATE_NO_WORD = 0.35  # and without
PREFERENCE_GATE, PREFERENCE_GATE_NO_WORD = 0.35, 0.45  # the preference route's, the same way
FOLLOW_UP_COSINE = 0.35  # whisper/conf.py follow_up_cosine, not fitted here
STRONG = 0.70  # a recall hit with this raw cosine passes on its own (the overlap filter's cosine floor)
FOLDS, SHUFFLES = 5, (0, 1, 2)


def _long(c: dict, call: list[dict]) -> float:
    return max(0.0, math.log(max(c.get("chars", 0), 1) / LONG_CHARS))


def _best_short(c: dict, call: list[dict]) -> float:
    """1 for the best hit by g among the memories that are not long (a note beside imported pages)."""
    short = [d for d in call if d["route"] == "logistic" and _long(d, call) == 0.0]
    return float(_long(c, call) == 0.0 and max(short, key=lambda d: d["inputs"][0]) is c)


def _short_margin(c: dict, call: list[dict]) -> float:
    """A short memory's g minus the best g among the other short memories (0 for a long one)."""
    if _long(c, call) > 0.0:
        return 0.0
    rest = [d["inputs"][0] for d in call if d["route"] == "logistic" and d is not c and _long(d, call) == 0.0]
    return c["inputs"][0] - max(rest, default=0.0)


def gate_inputs(call: list[dict]) -> None:
    """whisper.stages.gate.gate_inputs over a call's logistic rows, from their g and cosine (in place)."""
    hits = [c for c in call if c["route"] == "logistic"]
    by_g = sorted((c["g"] for c in hits), reverse=True)
    best_cos = max((c["cosine"] for c in hits), default=0.0)
    for c in hits:
        rank = by_g.index(c["g"])
        nxt = by_g[rank + 1] if rank + 1 < len(by_g) else 0.0
        c["inputs"] = [c["g"], c["cosine"], c["cosine"] - best_cos, c["g"] - by_g[0], float(rank == 0), c["g"] - nxt,
                       c.get("own_titled", 0.0), float(c.get("type") == "project")]


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
    "served"). Every hit's inputs are recomputed from its g and cosine (as whisper.stages.gate.gate_inputs)."""
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


# Candidate gate inputs beside whisper.stages.gate.GATE_INPUTS, measured with --inputs (dev only).
EXTRAS = {
    "long": _long,  # ln(characters / 1000), 0 below: imported pages, not notes
    "passage": lambda c, call: float(bool(c.get("passage"))),  # represented by the passage that matched
    "other_space": lambda c, call: float(c.get("target") is not None and c["space"] not in (None, c["target"])),
    "same_space": lambda c, call: float(c.get("target") is not None and c["space"] == c["target"]),
    "best_short": _best_short,
    "is_long": lambda c, call: float(c.get("chars", 0) > LONG_CHARS),
    "long_cos": lambda c, call: float(c.get("chars", 0) > LONG_CHARS) * c["cosine"],  # pages: trust the cosine
    "long_g": lambda c, call: float(c.get("chars", 0) > LONG_CHARS) * c["g"],  # pages: their g runs high
    "long_other": lambda c, call: _long(c, call) * EXTRAS["other_space"](c, call),  # a long page of another space
    "overlap": lambda c, call: float(bool(c.get("overlap"))),  # shares a distinctive word with the prompt
    "short_margin": _short_margin,
    "follow_up": lambda c, call: float(bool(c.get("follow_up"))),  # the query joins the previous prompts
    "both_legs": lambda c, call: float(c.get("fts_rank") is not None and c.get("vector_rank") is not None),
    "fts_first": lambda c, call: float(c.get("fts_rank") == 1),
    "vector_first": lambda c, call: float(c.get("vector_rank") == 1),
    "title_overlap": lambda c, call: float(bool(c.get("title_overlap"))),  # shares a word with the title
}
LONG_CHARS = 1000.0


def _scope(c: dict, scope: str) -> tuple[dict[str, int], int]:
    """Document counts of the prompt's words and the number of memories in a scope: "all" (the whole store),
    "project" (the prompt's project) or "project_global" (it and the global memories); outside a project, all."""
    v = c.get("vocabulary") or {"sizes": {}, "counts": {}}
    target = c.get("target")
    spaces = None if scope == "all" or target is None else {target} | ({""} if scope == "project_global" else set())
    total = sum(n for s, n in v["sizes"].items() if spaces is None or s in spaces)
    return {t: sum(n for s, n in by.items() if spaces is None or s in spaces) for t, by in v["counts"].items()}, total


def _idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _unknown(scope: str, weighted: bool = True):
    """The (IDF-weighted) share of the prompt's content words that no memory of the scope holds."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        w = {t: _idf(n, total) if weighted else 1.0 for t, n in df.items()}
        return sum(w[t] for t, n in df.items() if n == 0) / sum(w.values()) if w else 0.0
    return f


def _cover(scope: str):
    """The IDF-weighted share of the prompt's content words the candidate holds (IDF in the scope)."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        w = {t: _idf(n, total) for t, n in df.items()}
        return sum(w[t] for t in c.get("terms", ()) if t in w) / sum(w.values()) if w else 0.0
    return f


def _rare_lack(scope: str, known: bool):
    """The highest IDF (over the top IDF of the scope) of a prompt word the candidate lacks; `known`: only words
    the scope holds (another memory has it), else only words it lacks too (nothing stored has it)."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        lacking = [_idf(n, total) for t, n in df.items() if t not in c.get("terms", ()) and (n > 0) == known]
        return max(lacking, default=0.0) / _idf(0, max(total, 1))
    return f


VOCABULARY = {}
for _s in ("all", "project", "project_global"):
    VOCABULARY |= {f"unknown_{_s}": _unknown(_s), f"unknown_n_{_s}": _unknown(_s, weighted=False),
                   f"cover_{_s}": _cover(_s), f"lack_known_{_s}": _rare_lack(_s, True),
                   f"lack_unknown_{_s}": _rare_lack(_s, False)}
EXTRAS |= VOCABULARY
BY_LOGIT = False  # --by-logit: arrange orders the logistic gate's hits by their log-odds, not recall's score


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


def fit(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    xb = np.hstack([np.ones((len(x), 1)), x])
    w = np.zeros(xb.shape[1])
    reg = np.eye(len(w)) * L2
    reg[0, 0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(xb @ w, -30, 30)))
        grad = xb.T @ (p - y) + reg @ w
        hess = xb.T @ (xb * (p * (1 - p))[:, None]) + reg
        w -= np.linalg.solve(hess, grad)
    return w


def _follow_up_answer(call: list[dict]) -> int | None:
    """As whisper.stages.gate._follow_up_answer: on a follow-up whose hits hold a served memory (as production
    served it when the dump was made), the index of the unserved hit with the highest min(cosine to the joined
    query, to the prompt alone) when it reaches FOLLOW_UP_COSINE."""
    hits = [(k, c) for k, c in enumerate(call) if c["route"] in ("logistic", "served") and c.get("follow_up")]
    fresh = [(k, c) for k, c in hits if not c.get("served") and c.get("cos_alone") is not None]
    if not fresh or len(fresh) == len(hits):
        return None
    k, c = max(fresh, key=lambda kc: min(kc[1]["cos_alone"], kc[1]["cos_joined"]))
    return k if min(c["cos_alone"], c["cos_joined"]) >= FOLLOW_UP_COSINE else None


def passed(call: list[dict], logits: dict[int, float], t: float, served=frozenset()) -> list[str]:
    """What the gate, already_served and arrange would inject from one call's candidates at threshold t."""
    def ok(k: int, c: dict) -> bool:
        if c["route"] == "identity":
            return c["cosine"] >= (IDENTITY_GATE if c.get("overlap", True) else IDENTITY_GATE_NO_WORD)
        if c["route"] == "preference":
            return c["cosine"] >= (PREFERENCE_GATE if c.get("overlap", True) else PREFERENCE_GATE_NO_WORD)
        if c["route"] == "cosine":
            return c["cosine"] >= STRONG
        if c["route"] == "served":
            return False
        return c["cosine"] >= STRONG or logits[k] >= t

    if call and call[0].get("recap"):  # a broad recap skips the gate and the focus stage: newest first, capped
        kept = sorted((c for c in call if c["key"] not in served),
                      key=lambda c: (c.get("space_factor", 1.0), c.get("created", "")), reverse=True)
        return [c["key"] for c in kept[:CAP]]
    kept = [(k, c) for k, c in enumerate(call) if ok(k, c) or k == _follow_up_answer(call)]
    # As the gate's _best_identity_only: identity-route memories below `share` x the best one's stay out.
    best = max((c["cosine"] for _, c in kept if c["route"] in ("identity", "preference")), default=0.0)
    # Then as focus_check (whisper.stages.focus: a memory off the question's focus is dropped after the gate) and
    # already_served.
    kept = [(k, c) for k, c in kept if c["key"] not in served and not c.get("off_focus") and (
        c["route"] not in ("identity", "preference") or c["cosine"] >= c.get("share", 0.0) * best)]
    if BY_LOGIT:  # recall's hits first, by the gate's log-odds (identity memories by score)
        kept.sort(key=lambda kc: (not kc[1]["recall"], -logits[kc[0]] if kc[1]["route"] == "logistic"
                                  else -kc[1]["score"]))
    else:  # as arrange: recall's hits first, by score
        kept.sort(key=lambda kc: (not kc[1]["recall"], -kc[1]["score"]))
    kept = [c for _, c in kept]
    return [c["key"] for c in kept[:CAP]]


def evaluate(dump: list[dict], logits: dict[tuple, float], t: float, categories: bool = False):
    """(hit rate, precision, silence) at threshold t, history served as in bench.whisper_stores.run_one."""
    hits = inject = silent = silent_ok = injected = correct = 0
    by_category: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for pi, item in enumerate(dump):
        p, calls = item["prompt"], item["calls"]
        served: set[str] = set()
        got: list[str] = []
        for ci, call in enumerate(calls):
            lg = {k: logits.get((pi, ci, k), -99.0) for k in range(len(call or ()))}
            if ci < len(calls) - 1:
                served |= set(passed(call or [], lg, t))
            else:
                got = passed(call or [], lg, t, frozenset(served))
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
    scores = (hits / inject, correct / injected if injected else 1.0, silent_ok / silent)
    return (scores, dict(sorted(by_category.items()))) if categories else scores


def out_of_fold(dump: list[dict], x: np.ndarray, y: np.ndarray, where: list) -> dict[tuple, float]:
    """Each hit's log-odds from models fitted without its prompt, averaged over the shuffles."""
    got: dict[tuple, list[float]] = defaultdict(list)
    for seed in SHUFFLES:
        order = list(range(len(dump)))
        random.Random(seed).shuffle(order)
        fold = {pi: i % FOLDS for i, pi in enumerate(order)}
        for f in range(FOLDS):
            train = np.array([fold[w[0]] != f for w in where])
            w = fit(x[train], y[train])
            for j in np.where(~train)[0]:
                got[where[j]].append(float(w[0] + x[j] @ w[1:]))
    return {k: float(np.mean(v)) for k, v in got.items()}


def auc(scores: np.ndarray, y: np.ndarray) -> float:
    pos, neg = scores[y == 1], scores[y == 0]
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / max(1, len(pos) * len(neg)))


def operating_point(dump, logits) -> tuple | None:
    grid = [(*evaluate(dump, logits, round(float(t), 2)), round(float(t), 2)) for t in np.arange(-3.0, 3.01, 0.1)]
    ok = [g for g in grid if g[1] >= 0.9 and g[2] >= 0.95]
    return max(ok, key=lambda g: (g[0], g[1], g[2]), default=None)


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
    parser.add_argument("--grid", action="store_true",
                        help="also print out-of-fold and in-sample figures per threshold")
    args = parser.parse_args(argv)
    BY_LOGIT, SHUFFLES = args.by_logit, tuple(range(args.shuffles))
    extras, open_overlap = tuple(n for n in args.inputs.split(",") if n), args.open_overlap
    dump = json.loads(open(args.dump).read())
    if args.page_penalty is not None:
        from whisper.stages.retrieve import PAGE_PENALTY

        reweigh_pages(dump, args.page_penalty, PAGE_PENALTY, args.page_penalty_outside)
    dump = prepared(dump, open_overlap, args.served_out)
    x, y, where = rows(dump, extras)
    w = fit(x, y)
    full = {k: float(w[0] + x[j] @ w[1:]) for j, k in enumerate(where)}
    oof = out_of_fold(dump, x, y, where)
    print(f"{len(y)} hits judged, {int(y.sum())} right; weights (bias, {', '.join(GATE_INPUTS + extras)}): "
          + ", ".join(f"{v:.3f}" for v in w))
    print(f"AUC on dev: in-sample {auc(np.array([full[k] for k in where]), y):.3f}, "
          f"out-of-fold {auc(np.array([oof[k] for k in where]), y):.3f}")
    point = operating_point(dump, oof)
    if point is None:
        print("no threshold reaches precision 0.9 and silence 0.95 out of fold")
        return 1
    h, pr, s, t = point
    print(f"operating point (out of fold): log-odds >= {t:+.2f}: hit {h:.3f} precision {pr:.3f} silence {s:.3f}")
    print("  fully right per category (out of fold): " + ", ".join(
        f"{c} {r}/{n}" for c, (r, n) in evaluate(dump, oof, t, categories=True)[1].items()))
    if not extras and not open_overlap and not args.served_out:
        from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

        held = np.array(GATE_WEIGHTS[1:] + (0.0,) * (x.shape[1] + 1 - len(GATE_WEIGHTS)))  # an input it lacks: 0
        today = {k: float(GATE_WEIGHTS[0] + x[j] @ held) for j, k in enumerate(where)}
        print("today's weights on this dump at log-odds >= {:+.2f}: hit {:.3f} precision {:.3f} silence {:.3f}".format(
            GATE_LOGIT, *evaluate(dump, today, GATE_LOGIT)))
    h, pr, s = evaluate(dump, full, t)
    print(f"the full fit at that threshold (in sample): hit {h:.3f} precision {pr:.3f} silence {s:.3f}")
    if args.grid:
        print("| log-odds >= | out of fold hit / precision / silence | full fit, in sample |\n|---:|---|---|")
        for t in np.arange(-0.5, 1.01, 0.1):
            print(f"| {t:+.1f} | " + " / ".join(f"{v:.3f}" for v in evaluate(dump, oof, round(float(t), 2)))
                  + " | " + " / ".join(f"{v:.3f}" for v in evaluate(dump, full, round(float(t), 2))) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
