"""Fit the recall scorer (memory/ranking/weights-v5.json): logistic regression on labelled candidate pools, with
cross-validation grouped by conversation / query / prompt, the thresholds of memory.ranking.thresholds, and a
reliability table.

    python -m bench.fit_scorer [--write | --out weights-NAME.json] [--l2 10] [--whisper-weight 1] [--no-silent]
                               [--embedder DOTTED] [--compare weights-v2.json]

The pools (bench/scorer_pools.py) are exactly what recall scores, on dev splits only: LoCoMo dev questions, the
project's own set and the labelled stores' questions, and the recall calls whisper makes for the whisper dev
prompts (tasks, commands and statements asked inside a project, with its space). Rows of whisper pools weigh
`--whisper-weight` each (a whisper pool holds ~100 candidates, a LoCoMo one ~350; with batches 1-10 there are
~1,500 whisper calls to 923 questions, so they weigh as questions do);
the pools of should-stay-silent prompts are negatives unless `--no-silent`.

`--write` writes the weights file and the "Recall scorer" section of docs/benchmarks.md. `--embedder` builds the
pools with another embedding model (its own stores and caches, e.g. memory.embedding_models.ParaphraseL3Embedder);
`--out NAME` writes the fit to a new file of memory/ranking/ instead (never over the file recall reads, and no docs
section), which the benches load with `--scorer NAME`. `--compare` scores the same pools with a packaged file as it
is (not refitted) for the table's last column.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime

import numpy as np

from bench import locomo
from bench._common import REPO
from bench.scorer_pools import FOLDS, FRESH_BATCHES, WHISPER_EMBEDDER, Pool, collect
from memory.ranking.features import FEATURES
from memory.ranking.scorer import WEIGHTS_FILE, load_scorer

WEIGHTS = REPO / "memory" / "ranking" / "weights-v5.json"  # WEIGHTS_FILE: what recall reads
VERSION = "v5"  # bump when the features, the pipeline under them or the pools change
L2 = 10.0
WHISPER_WEIGHT = 1.0  # v5 (session 20): with 1,511 whisper calls, 5 (v3, v4) let them outweigh LoCoMo
MIN_SCALE = 0.1
FLOOR_DROPS = 0.01  # share of the relevant top-10 hits the recall floor may drop
WHISPER_CAP = 2  # whisper injects at most this many memories (whisper/conf.py max_nodes)


# ---------------------------------------------------------------------------
# Logistic regression (numpy, IRLS with an L2 penalty on the standardised weights)
# ---------------------------------------------------------------------------

def _loss(A: np.ndarray, y: np.ndarray, s: np.ndarray, w: np.ndarray, penalty: np.ndarray) -> float:
    z = A @ w
    return float(np.sum(s * (np.logaddexp(0, z) - y * z)) + 0.5 * np.sum(penalty * w * w))


def fit(pools: list[Pool], l2: float = L2) -> dict:
    """Penalised, weighted logistic regression by Newton steps with step halving (features scaled by
    max(std, 0.1), so a feature that is nearly constant in the data cannot get a huge standardised value)."""
    pools = [p for p in pools if len(p.labels)]
    X = np.concatenate([p.matrix for p in pools])
    y = np.concatenate([p.labels for p in pools]).astype(np.float64)
    s = np.concatenate([p.row_weights() for p in pools])
    mean, std = X.mean(axis=0), X.std(axis=0)
    live = std > 1e-9
    scale = np.maximum(std, MIN_SCALE)
    Z = np.where(live, (X - mean) / scale, 0.0)
    A = np.hstack([np.ones((len(Z), 1)), Z])
    w = np.zeros(A.shape[1])
    rate = float(np.sum(s * y) / max(np.sum(s), 1e-9))
    w[0] = np.log(max(rate, 1e-6) / max(1 - rate, 1e-6))
    penalty = np.r_[0.0, np.full(Z.shape[1], l2)]
    loss = _loss(A, y, s, w, penalty)
    for _ in range(100):
        p = 1 / (1 + np.exp(-np.clip(A @ w, -30, 30)))
        grad = A.T @ (s * (p - y)) + penalty * w
        hess = (A.T * (s * p * (1 - p))) @ A + np.diag(penalty + 1e-6)
        step = np.linalg.solve(hess, grad)
        t = 1.0
        while t > 1e-4:
            new = _loss(A, y, s, w - t * step, penalty)
            if new <= loss:
                break
            t /= 2
        w, improved, loss = w - t * step, loss - new, new
        if improved < 1e-6 * max(1.0, abs(loss)):
            break
    return {"features": list(FEATURES), "mean": mean.tolist(), "scale": scale.tolist(),
            "coef": [float(c) if ok else 0.0 for c, ok in zip(w[1:], live)], "intercept": float(w[0])}


def scorer_of(params: dict):
    from memory.ranking.scorer import Scorer

    return Scorer.from_dict({"version": "cv", **params})


# ---------------------------------------------------------------------------
# Evaluation
# ---------------------------------------------------------------------------

def ranked_labels(pool: Pool, probs: np.ndarray, floor: float = 0.0, good: float = 0.0,
                  unknown: float = 0.0) -> np.ndarray:
    if not len(probs) or probs.max() < good or pool.unknown_words(unknown):
        return np.zeros(0, dtype=bool)
    order = np.argsort(-probs, kind="stable")
    order = order[probs[order] >= floor]
    return pool.labels[order]


def recall_table(pools: list[Pool], probs: list[np.ndarray], *, floor=0.0, good=0.0, unknown=0.0) -> dict:
    """recall@k per (set family, category) and per LoCoMo overall."""
    sums: dict[tuple[str, str], list[float]] = {}
    for pool, pr in zip(pools, probs):
        fam = "locomo" if pool.set.startswith("locomo:") else pool.set
        ranked = ranked_labels(pool, pr, floor, good, unknown)
        vals = [ranked[:k].sum() / pool.n_relevant for k in locomo.KS]
        for key in ((fam, pool.category), (fam, "overall")):
            sums.setdefault(key, []).append(vals)
    return {key: np.mean(v, axis=0) for key, v in sums.items()}


def cross_validate(pools: list[Pool], l2: float, fitted: set[int] | None = None) -> list[np.ndarray]:
    """Out-of-fold probabilities: each fold's pools scored by a model fitted on the other folds (on those whose
    id() is in `fitted`, when given)."""
    out: list[np.ndarray | None] = [None] * len(pools)
    for f in range(FOLDS):
        scorer = scorer_of(fit([p for p in pools if p.fold != f and (fitted is None or id(p) in fitted)], l2))
        for i, p in enumerate(pools):
            if p.fold == f:
                out[i] = scorer.probabilities(p.matrix) if len(p.labels) else np.zeros(0)
    return out


def out_of_group(pools: list[Pool], l2: float, fitted: set[int], by: str) -> list[np.ndarray | None]:
    """Each pool scored by a model fitted on the pools of every other group (leave one group out): by "store"
    (a store's questions and the whisper calls about it together; LoCoMo is one store) or by "batch" (whisper
    labelling rounds; the questions are always fitted and get None)."""
    key = (lambda p: p.store) if by == "store" else (lambda p: p.batch if p.set == "whisper" else None)
    out: list[np.ndarray | None] = [None] * len(pools)
    for g in sorted({key(p) for p in pools if key(p) is not None}, key=str):
        scorer = scorer_of(fit([p for p in pools if key(p) != g and id(p) in fitted], l2))
        for i, p in enumerate(pools):
            if key(p) == g:
                out[i] = scorer.probabilities(p.matrix) if len(p.labels) else np.zeros(0)
    return out


def whisper_sweep(pools: list[Pool], probs: list[np.ndarray], cap: int = WHISPER_CAP) -> list[tuple]:
    """(gate, hit rate, precision, silence, prompts) of a plain probability gate over whisper's recall calls:
    per prompt, the best `cap` candidates at or above the gate across its calls. A proxy for bench.whisper_stores
    (no identity route, overlap filter or logistic gate), over the dev prompts that reached recall."""
    by_prompt: dict[str, list[tuple[Pool, np.ndarray]]] = defaultdict(list)
    for p, pr in zip(pools, probs):
        by_prompt[p.key].append((p, pr))
    rows = []
    for gate in (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7):
        hits = inject = silent = silent_ok = injected = correct = 0
        for items in by_prompt.values():
            cands = sorted(((float(pr[i]), bool(p.labels[i]), bool(p.good[i])) for p, pr in items
                            for i in range(len(pr)) if pr[i] >= gate), reverse=True)[:cap]
            injected += len(cands)
            correct += sum(g for _, _, g in cands)
            if items[0][0].n_relevant:
                inject += 1
                hits += any(rel for _, rel, _ in cands)
            else:
                silent += 1
                silent_ok += not cands
        rows.append((gate, hits / max(inject, 1), correct / injected if injected else 1.0,
                     silent_ok / max(silent, 1), inject + silent))
    return rows


def reliability(pools: list[Pool], probs: list[np.ndarray], top: int = 10) -> list[tuple[str, int, float, float]]:
    """(bin, n, mean predicted, observed share relevant) over each query's top `top` candidates."""
    pred, obs = [], []
    for pool, pr in zip(pools, probs):
        order = np.argsort(-pr, kind="stable")[:top]
        pred += pr[order].tolist()
        obs += pool.labels[order].tolist()
    pred, obs = np.array(pred), np.array(obs, dtype=float)
    edges = [0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0001]
    rows = []
    for lo, hi in zip(edges, edges[1:]):
        m = (pred >= lo) & (pred < hi)
        if m.any():
            rows.append((f"{lo:.2f}-{min(hi, 1):.2f}", int(m.sum()), float(pred[m].mean()), float(obs[m].mean())))
    return rows


def choose_thresholds(answerable: list[Pool], a_probs, offtopic: list[Pool], o_probs) -> dict:
    """no_good_match: the highest value keeping 99% of the answerable queries whose top 10 holds an answer;
    recall_floor: drops at most 1% of the relevant hits of the top 10 (2% cost LoCoMo dev 0.006 R@10 out-of-fold
    for a floor of 0.009 instead of 0.006); unknown_words_cosine: see choose_unknown_words; whisper_gate (kept
    from the file by main, see there): the lowest value at which the top hit of the labelled stores (not LoCoMo)
    is right 90% of the time."""
    kept_best = np.array([pr.max() for p, pr in zip(answerable, a_probs)
                          if len(pr) and ranked_labels(p, pr)[:10].any()])
    good = float(np.quantile(kept_best, 0.01))
    rel = np.concatenate([pr[np.argsort(-pr)[:10]][p.labels[np.argsort(-pr)[:10]]]
                          for p, pr in zip(answerable, a_probs) if len(pr)])
    floor = min(good, float(np.quantile(rel, FLOOR_DROPS)))
    tops = [(float(pr.max()), bool(ranked_labels(p, pr)[:1].any())) for p, pr in zip(answerable, a_probs)
            if len(pr) and not p.set.startswith("locomo")]
    gate = 0.5
    for t in np.arange(0.1, 0.95, 0.01):
        sel = [ok for s, ok in tops if s >= t]
        if len(sel) >= 20 and np.mean(sel) >= 0.9:
            gate = float(round(t, 2))
            break
    unknown = choose_unknown_words(answerable, a_probs, offtopic)
    silent = np.array([(pr.max() if len(pr) else 0.0) < good or p.unknown_words(unknown)
                       for p, pr in zip(offtopic, o_probs)])
    by_words = np.array([p.unknown_words(unknown) for p in offtopic])
    nonsense = np.array([p.set == "nonsense" for p in offtopic])
    kept = [not (pr.max() < good or p.unknown_words(unknown)) for p, pr in zip(answerable, a_probs)
            if len(pr) and ranked_labels(p, pr)[:10].any()]
    return {"recall_floor": round(floor, 4), "no_good_match": round(good, 4), "whisper_gate": gate,
            "unknown_words_cosine": unknown, "_offtopic_silenced": float(silent.mean()),
            "_offtopic_by_words": float(by_words.mean()), "_nonsense_silenced": float(silent[nonsense].mean()),
            "_answerable_kept": float(np.mean(kept))}


def choose_unknown_words(answerable: list[Pool], a_probs, offtopic: list[Pool]) -> float:
    """unknown_words_cosine: above the best cosine of every off-topic dev query none of whose words the store holds
    (nonsense strings, the stores' off-topic queries), rounded up to 0.05; lowered, if need be, to keep every
    answerable dev query none of whose words the store holds and whose top 10 holds an answer (out-of-fold).
    Questions of one LoCoMo conversation asked of another are left out here: they are chit-chat asked of
    chit-chat (best cosine up to 0.44), and answerable paraphrases that share a single word with their store sit at
    0.38-0.56, so a gate that high would silence the next paraphrase that shares none."""
    off = [p.best_cos for p in offtopic if p.vocabulary == 0.0 and not p.windowed and p.set != "locomo-cross"]
    keep = [p.best_cos for p, pr in zip(answerable, a_probs)
            if p.vocabulary == 0.0 and not p.windowed and len(pr) and ranked_labels(p, pr)[:10].any()]
    cosine = math.ceil(max(off, default=0.0) * 20 + 1e-9) / 20
    return round(min([cosine, *(math.floor(c * 100) / 100 for c in keep)]), 2)


def _fmt(v) -> str:
    return " / ".join(f"{x:.3f}" for x in v)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="write the weights file and the docs section")
    parser.add_argument("--refresh", action="store_true", help="recompute the cached pools")
    parser.add_argument("--l2", type=float, default=L2)
    parser.add_argument("--whisper-weight", type=float, default=WHISPER_WEIGHT,
                        help="weight of each whisper row (0: leave whisper out of the fit)")
    parser.add_argument("--no-silent", action="store_true", help="leave the silent whisper prompts out of the fit")
    parser.add_argument("--drop", default="", help="comma-separated features to leave out (weight 0)")
    parser.add_argument("--embedder", default=WHISPER_EMBEDDER, help="dotted path of the Embedder class the pools "
                        "are built with (default: MiniLM-L6 with document vectors cached on disk)")
    parser.add_argument("--out", help="write the fit to this new file of memory/ranking/ (weights-*.json; not the "
                        "file recall reads, no docs section)")
    parser.add_argument("--compare", default=WEIGHTS_FILE, help="a packaged scorer file scored as it is on the same "
                        "pools (last column)")
    args = parser.parse_args(argv)
    if args.out and (args.write or args.out == WEIGHTS_FILE or not args.out.startswith("weights-")
                     or not args.out.endswith(".json") or "/" in args.out):
        parser.error(f"--out takes a new weights-*.json name other than {WEIGHTS_FILE}, without --write")
    started = time.process_time()
    questions, offtopic, w_inject, w_silent, w_fresh, model_id = collect(args.refresh, embedder=args.embedder)
    for p in w_inject + w_silent:
        p.weight = args.whisper_weight
    whisper = w_inject + ([] if args.no_silent else w_silent)
    dropped = [FEATURES.index(f) for f in args.drop.split(",") if f]
    for p in questions + offtopic + w_inject + w_silent:
        if dropped and len(p.labels):
            p.matrix = p.matrix.copy()
            p.matrix[:, dropped] = 0.0
    train = questions + [p for p in whisper if p.weight > 0]
    in_train = {id(p) for p in train}
    everything = train + [p for p in w_inject + w_silent if id(p) not in in_train]
    oof_of = {id(p): pr for p, pr in zip(everything, cross_validate(everything, args.l2, fitted=in_train))}
    answerable = questions + w_inject
    oof = [oof_of[id(p)] for p in answerable]
    grouped = {by: dict(zip(map(id, everything), out_of_group(everything, args.l2, in_train, by)))
               for by in ("store", "batch")}
    params = fit(train, args.l2)
    final = scorer_of(params)
    insample = [final.probabilities(p.matrix) if len(p.labels) else np.zeros(0) for p in answerable]
    o_probs = [final.probabilities(p.matrix) if len(p.labels) else np.zeros(0) for p in offtopic]
    th = choose_thresholds(answerable, oof, offtopic, o_probs)
    # The whisper gate is tuned on the whisper dev split by whisper's own bench, not here: keep the file's value.
    previous = WEIGHTS if WEIGHTS.is_file() else WEIGHTS.with_name("weights-v2.json")
    th["_whisper_gate_fitted"] = th["whisper_gate"]
    th["whisper_gate"] = json.loads(previous.read_text()).get("thresholds", {}).get("whisper_gate",
                                                                                   th["whisper_gate"])
    sweep = whisper_sweep(w_inject + w_silent, [oof_of[id(p)] for p in w_inject + w_silent])
    cv_t, in_t = recall_table(answerable, oof), recall_table(answerable, insample)
    compared = load_scorer(args.compare)
    file_t = recall_table(answerable, [compared.probabilities(p.matrix) if len(p.labels) else np.zeros(0)
                                       for p in answerable])
    cv_floor = recall_table(answerable, oof, floor=th["recall_floor"], good=th["no_good_match"],
                            unknown=th["unknown_words_cosine"])
    lines = [f"`python -m bench.fit_scorer --whisper-weight {args.whisper_weight:g}"
             f"{' --no-silent' if args.no_silent else ''}{' --drop ' + args.drop if args.drop else ''}"
             f"{' --embedder ' + args.embedder if args.embedder != WHISPER_EMBEDDER else ''}`: "
             f"{len(questions)} labelled questions and {len(whisper)} whisper recall calls "
             f"({len(w_inject)} should-inject, {len(whisper) - len(w_inject)} should-stay-silent; rows weigh "
             f"{args.whisper_weight:g}) ({sum(len(p.labels) for p in train)} candidate pairs), {len(offtopic)} "
             f"off-topic queries, model {model_id}, {FOLDS} folds grouped by LoCoMo conversation / query id / "
             f"prompt id, L2 {args.l2}; dev splits only.", "",
             "| set | category | n | R@5 / R@10 / R@30 out-of-fold | same, with floor and no-good-match | "
             f"in-sample | {args.compare} as it is ({compared.version}) |", "|---|---|---:|---|---|---|---|"]
    counts: dict[tuple[str, str], int] = {}
    for p in answerable:
        fam = "locomo" if p.set.startswith("locomo:") else p.set
        for key in ((fam, p.category), (fam, "overall")):
            counts[key] = counts.get(key, 0) + 1
    for key in sorted(cv_t):
        lines.append(f"| {key[0]} | {key[1]} | {counts[key]} | {_fmt(cv_t[key])} | {_fmt(cv_floor[key])} | "
                     f"{_fmt(in_t[key])} | {_fmt(file_t[key])} |")
    w_all = w_inject + w_silent
    by_store = recall_table(answerable, [grouped["store"][id(p)] for p in answerable])
    w_batch = recall_table(w_inject, [grouped["batch"][id(p)] for p in w_inject])
    lines += ["", "Left out by store (a store's questions and the whisper calls about it scored by a fit on the others; "
              "LoCoMo is one store) and, for whisper, by labelling round; R@5 / R@10 / R@30:", "",
              "| set | category | out-of-fold | left out by store | whisper left out by batch |", "|---|---|---|---|---|"]
    lines += [f"| {k[0]} | {k[1]} | {_fmt(cv_t[k])} | {_fmt(by_store[k])} | "
              f"{_fmt(w_batch[k]) if k in w_batch else '-'} |" for k in sorted(cv_t) if k[1] == "overall"]
    per_store: dict[str, list] = defaultdict(list)
    for p in w_inject:
        per_store[p.store].append(p)
    lines += ["", "Whisper should-inject calls per store: R@5 / R@10 / R@30 out-of-fold | left out by store:", ""]
    for st, ps in sorted(per_store.items()):
        a = recall_table(ps, [oof_of[id(p)] for p in ps])[("whisper", "overall")]
        b = recall_table(ps, [grouped["store"][id(p)] for p in ps])[("whisper", "overall")]
        lines.append(f"- {st} ({len(ps)} calls): {_fmt(a)} | {_fmt(b)}")
    sweeps = {by: whisper_sweep(w_all, [grouped[by][id(p)] for p in w_all]) for by in ("store", "batch")}
    lines += ["", "The proxy gate of the last table below, left out by store and by batch (hit / precision / silence):",
              "", "| gate | out-of-fold | by store | by batch |", "|---:|---|---|---|"]
    lines += [f"| {a[0]:.2f} | {_fmt(a[1:4])} | {_fmt(b[1:4])} | {_fmt(c[1:4])} |"
              for a, b, c in zip(sweep, sweeps["store"], sweeps["batch"])]
    lines += ["", "Weights (standardised features; the file keeps mean and scale):", "",
              "| feature | weight |", "|---|---:|"]
    lines += [f"| {f} | {c:+.3f} |" for f, c in zip(params["features"], params["coef"])]
    lines += [f"| (intercept) | {params['intercept']:+.3f} |", "",
              "Reliability over each query's top 10, out-of-fold (predicted vs observed share relevant):", "",
              "| predicted | n | mean predicted | observed |", "|---|---:|---:|---:|"]
    lines += [f"| {b} | {n} | {mp:.3f} | {ob:.3f} |" for b, n, mp, ob in reliability(answerable, oof)]
    lines += ["", f"Whisper dev prompts that reached recall ({sweep[0][4]}), out-of-fold, a plain probability gate "
              f"(the best {WHISPER_CAP} at or above it; a proxy: bench.whisper_stores measures the real path):", "",
              "| gate | hit rate | precision | silence |", "|---:|---:|---:|---:|"]
    lines += [f"| {g:.2f} | {h:.3f} | {pr:.3f} | {si:.3f} |" for g, h, pr, si, _ in sweep]
    fresh_fit = recall_table(w_fresh, [final.probabilities(p.matrix) if len(p.labels) else np.zeros(0)
                                       for p in w_fresh]) if w_fresh else {}
    fresh_file = recall_table(w_fresh, [compared.probabilities(p.matrix) if len(p.labels) else np.zeros(0)
                                        for p in w_fresh]) if w_fresh else {}
    if ("whisper", "overall") in fresh_fit:
        lines += ["", f"Transfer: the should-inject recall calls of the dev prompts of FRESH_BATCHES "
                  f"{sorted(FRESH_BATCHES)} ({len(w_fresh)} calls, never fitted), R@5 / R@10 / R@30: this fit "
                  f"{_fmt(fresh_fit[('whisper', 'overall')])}, {args.compare} as it is "
                  f"{_fmt(fresh_file[('whisper', 'overall')])}."]
    lines += ["", "Thresholds (memory.ranking.thresholds): " + ", ".join(
        f"{k} {v}" for k, v in th.items() if not k.startswith("_")) +
        f" (whisper_gate kept from the file: bench/whisper_gate_fit.py and bench.whisper_stores tune it on the "
        f"whisper dev split; this fit's own top-1 rule would give {th['_whisper_gate_fitted']})"
        f"; answerable queries kept {th['_answerable_kept']:.3f} (out-of-fold); off-topic queries silenced "
        f"{th['_offtopic_silenced']:.3f} ({th['_offtopic_by_words']:.3f} by unknown words), nonsense strings "
        f"{th['_nonsense_silenced']:.3f} (final scorer); "
        f"CPU {time.process_time() - started:.0f} s."]
    text = "\n".join(lines)
    print(text)
    if args.write or args.out:
        thresholds = {k: v for k, v in th.items() if not k.startswith("_")}
        name = args.out.removeprefix("weights-").removesuffix(".json") if args.out else VERSION  # e.g. v2-l3
        data = {"version": f"{name}-{datetime.now(UTC):%Y%m%d}", **params, "thresholds": thresholds,
                "meta": {"model": model_id, "queries": len(questions), "whisper_calls": len(whisper),
                         "whisper_weight": args.whisper_weight, "l2": args.l2, "folds": FOLDS,
                         "fitted_by": " ".join(["python -m bench.fit_scorer",
                                                 *(sys.argv[1:] if argv is None else argv)])}}
        target = WEIGHTS.with_name(args.out) if args.out else WEIGHTS
        tmp = target.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, target)
        if args.out:
            return 0
        from bench._common import write_block

        write_block("fit_scorer", text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
