"""Changes to whisper's candidate set (its pool), each measured on the dev split per batch (issue 11, session 21).

    python -m bench.whisper_pool_variants --variant base --out /tmp/base.json     # one variant, one fresh store
    python -m bench.whisper_pool_variants --variant limit:8 --out /tmp/l8.json
    python -m bench.whisper_pool_variants --report /tmp/base.json /tmp/l8.json ...  # aggregates and leave-one-out

Each run seeds the four stores into a fresh home and runs every dev prompt through whisper_respond exactly as
bench.whisper_stores does (production settings), with one change to the pool; it writes per dev batch the counts
hit rate, precision and silence are made of, and the whisper CPU (time.process_time around each prompt, history
prompts included). Variants (the base's recall is memory.search.recall with the pinned scorer v2):

* `base`: whisper as it is.
* `limit:N`: `WHISPER_SEARCH_LIMIT` N instead of 6: a wider pool, the gate unchanged.
* `v5:N`: the pool's members are recall's first N under scorer v5 (memory.ranking.scorer.WEIGHTS_FILE, the one
  recall uses), each with the probability scorer v2 gives it (a v2 recall of WIDE): the gate reads what it was fitted
  on. A member v2's WIDE leaves out is dropped. Two recalls per search: the CPU figure is an upper bound.
* `vec:K`: recall's first 6 as today, and besides them every memory of a v2 recall of WIDE whose vector-leg rank is
  at most K (the memories nearest the query, which BM25 and the word features push out: paraphrases).
* `v5q:D`: whisper's recall reads scorer v5 (no pin: one recall, as today), and each hit's probability is carried to
  v2's scale by a quantile map (`mapped`; `--fit-qmap FILE` runs the dev split and writes it from both scorers'
  probabilities of the same memories over batches outside FRESH_BATCHES; the variant reads the file named by
  WHISPER_POOL_QMAP), less D log-odds: the gate, fitted on v2, reads v5's ranking on the scale it was fitted on.
* `sentences`: every query whisper searches (the prompt, a follow-up's joined prompts, the question alone) that
  holds two or more sentences also has each sentence of MIN_LETTERS letters or more searched apart, each memory
  keeping its better hit (today only the question sentences are, whisper.asked).

`--report` prints hit / precision / silence with counts for dev batches 1-11 (bench.whisper_gate_fit.FRESH_BATCHES
out) and the fresh batch apart, the CPU per prompt, and for each family of settings (`limit:*`, `v5:*`, `vec:*`,
`v5q:*`, with `base` as its member of no change) the leave-one-batch-out choice: on each batch b, the setting with
the most hits on the other ten whose precision and silence there are not below the base's (ties: the base, then the
smaller setting), scored on b; summed over the eleven. Never the test split.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES
from bench.whisper_quality import setup_django
from bench.whisper_stores import EMBEDDER, metrics, run_one, seed_stores

WIDE = 50
COUNTS = ("hits", "inject", "correct", "injected", "silent_ok", "silent")
QMAP_ENV = "WHISPER_POOL_QMAP"  # the quantile map `v5q` reads (written by --fit-qmap)
QUANTILES = [0.005 + 0.01 * i for i in range(100)]


def logit(p: float) -> float:
    p = min(max(p, 1e-6), 1 - 1e-6)
    return math.log(p / (1 - p))


def mapped(p: float, qmap: dict[str, list[float]], shift: float = 0.0) -> float:
    """A v5 probability carried to v2's scale: its log-odds placed at the same quantile of v2's (linear between the
    map's points, constant past its ends), less `shift` log-odds."""
    import numpy as np

    z = float(np.interp(logit(p), qmap["v5"], qmap["v2"])) - shift
    return 1.0 / (1.0 + math.exp(-z))


def fit_qmap(pairs: list[tuple[float, float]]) -> dict[str, list[float]]:
    """The quantiles (QUANTILES) of both scorers' log-odds over the same (v2, v5) probability pairs."""
    import numpy as np

    v2 = np.array([logit(a) for a, _ in pairs])
    v5 = np.array([logit(b) for _, b in pairs])
    return {"v5": np.quantile(v5, QUANTILES).tolist(), "v2": np.quantile(v2, QUANTILES).tolist()}


def collect_pairs(out: Path) -> None:
    """Run the dev split as it is; for every recall whisper makes in a batch outside FRESH_BATCHES, both scorers'
    probabilities of each memory among both scorers' first WIDE; write their quantile map (`fit_qmap`)."""
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    pairs: list[tuple[float, float]] = []
    batch = [None]
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-variants-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        import whisper.services.respond as respond
        from memory.search import recall

        original = respond._recall_pinned

        def search(query, now, embedder):
            hits = original(query, now, embedder)
            if batch[0] not in FRESH_BATCHES:
                wide = _wide(query, query.limit)
                v2 = {h.node_id: h.score for h in original(wide, now, embedder)}
                v5 = {h.node_id: h.score for h in recall(query=wide, now=now, embedder=embedder, warnings=False)}
                pairs.extend((v2[n], v5[n]) for n in v2.keys() & v5.keys())
            return hits

        respond._recall_pinned = search
        try:
            for p in scenarios.prompts_in("dev"):
                batch[0] = p.get("batch", 1)
                run_one(p, ids, now=scenarios.now)
        finally:
            respond._recall_pinned = original
    out.write_text(json.dumps({**fit_qmap(pairs), "pairs": len(pairs)}))


def _wide(query, limit: int):
    return query.model_copy(update={"limit": max(WIDE, limit)})


@contextmanager
def variant(name: str):
    """Apply one variant to whisper for the block (bench only: patches whisper.services.respond's recall call or
    whisper.stages.retrieve; settings through django.conf.settings.ORMAH)."""
    from django.conf import settings

    import whisper.services.respond as respond
    from memory.search import recall

    kind, _, arg = name.partition(":")
    original = respond._recall_pinned
    if kind == "base":
        yield
        return
    if kind == "limit":
        settings.ORMAH["WHISPER_SEARCH_LIMIT"] = int(arg)
        try:
            yield
        finally:
            settings.ORMAH.pop("WHISPER_SEARCH_LIMIT", None)
        return
    if kind == "v5":
        def search(query, now, embedder):
            size = int(arg)
            wide = original(_wide(query, size), now, embedder)
            # Outside whisper's pin recall reads its own scorer file (WEIGHTS_FILE).
            members = recall(query=query.model_copy(update={"limit": size}), now=now, embedder=embedder,
                             warnings=False)
            by_id = {h.node_id: h for h in wide}
            return sorted((by_id[h.node_id] for h in members if h.node_id in by_id), key=lambda h: -h.score)
    elif kind == "v5q":
        import dataclasses

        qmap = json.loads(Path(os.environ[QMAP_ENV]).read_text())
        shift = float(arg or 0)

        def search(query, now, embedder):
            hits = recall(query=query, now=now, embedder=embedder, warnings=False)  # scorer v5: no pin
            return [dataclasses.replace(h, score=mapped(h.score, qmap, shift)) for h in hits]
    elif kind == "vec":
        def search(query, now, embedder):
            wide = original(_wide(query, query.limit), now, embedder)
            top = original(query, now, embedder)
            seen = {h.node_id for h in top}
            return top + [h for h in wide if h.node_id not in seen and h.vector_rank is not None
                          and h.vector_rank <= int(arg)]
    elif kind == "sentences":
        import whisper.stages.retrieve as retrieve
        from whisper.asked import MIN_LETTERS, sentences

        searched = retrieve._search

        def apart(query, conf, deps, plain=None):
            hits = searched(query, conf, deps, plain)
            parts = sentences(query.query)
            for part in parts if len(parts) > 1 else ():
                if sum(ch.isalpha() for ch in part) >= MIN_LETTERS:
                    hits = retrieve._better_of(hits, searched(query.model_copy(update={"query": part}), conf, deps),
                                               query.limit)
            return hits

        retrieve._search = apart
        try:
            yield
        finally:
            retrieve._search = searched
        return
    else:
        raise ValueError(f"unknown variant {name!r}: base, limit:N, v5:N, vec:K, v5q:D, sentences")
    respond._recall_pinned = search
    try:
        yield
    finally:
        respond._recall_pinned = original


def run(name: str, out: Path) -> None:
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-variants-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        prompts = scenarios.prompts_in("dev")
        by_batch: dict[int, list] = {}
        cpu = 0.0
        with variant(name):
            for p in prompts:
                started = time.process_time()
                outcome = run_one(p, ids, now=scenarios.now)
                cpu += time.process_time() - started
                by_batch.setdefault(p.get("batch", 1), []).append(outcome)
        batches = {str(b): {k: metrics(o)[k] for k in COUNTS} for b, o in sorted(by_batch.items())}
        calls = sum(1 + len(p.get("history", [])) for p in prompts)
        out.write_text(json.dumps({"variant": name, "batches": batches, "cpu_s": round(cpu, 2), "prompts": len(prompts),
                                   "calls": calls}, indent=1))


def summed(batches: dict[str, dict], keep) -> dict[str, int]:
    return {k: sum(v[k] for b, v in batches.items() if keep(int(b))) for k in COUNTS}


def figures(c: dict[str, int]) -> str:
    def ratio(a, b):
        return a / b if b else 1.0
    return (f"{ratio(c['hits'], c['inject']):.3f} ({c['hits']}/{c['inject']}) / "
            f"{ratio(c['correct'], c['injected']):.3f} ({c['correct']}/{c['injected']}) / "
            f"{ratio(c['silent_ok'], c['silent']):.3f} ({c['silent_ok']}/{c['silent']})")


def _setting(name: str) -> float:
    return float(name.partition(":")[2] or 0)


def lobo(runs: dict[str, dict], family: str) -> tuple[dict[str, int], list[str]] | None:
    """The family's leave-one-batch-out counts and the setting chosen for each left-out batch."""
    names = ["base"] + sorted((n for n in runs if n.startswith(family + ":")), key=_setting)
    if "base" not in runs or len(names) < 2:
        return None
    fit = sorted(int(b) for b in runs["base"]["batches"] if int(b) not in FRESH_BATCHES)
    total = dict.fromkeys(COUNTS, 0)
    chosen = []
    for left in fit:
        others = [summed(runs[n]["batches"], lambda b, left=left: b != left and b not in FRESH_BATCHES)
                  for n in names]
        base = others[0]

        def ok(c):
            return c["correct"] * base["injected"] >= base["correct"] * c["injected"] and c["silent_ok"] >= base[
                "silent_ok"]
        best = max((i for i, c in enumerate(others) if i == 0 or ok(c)), key=lambda i: (others[i]["hits"], -i))
        chosen.append(names[best])
        for k in COUNTS:
            total[k] += runs[names[best]]["batches"][str(left)][k]
    return total, chosen


def report(paths: list[Path]) -> None:
    runs = {}
    for path in paths:
        data = json.loads(path.read_text())
        runs[data["variant"]] = data
    for name, data in runs.items():
        fit = summed(data["batches"], lambda b: b not in FRESH_BATCHES)
        fresh = summed(data["batches"], lambda b: b in FRESH_BATCHES)
        print(f"{name:12} dev 1-11 {figures(fit)}   fresh {figures(fresh)}   CPU {data['cpu_s']:.1f} s "
              f"({1000 * data['cpu_s'] / data['calls']:.1f} ms per whisper call)")
    for family in sorted({n.partition(":")[0] for n in runs if ":" in n}):
        result = lobo(runs, family)
        if result is not None:
            total, chosen = result
            print(f"leave-one-batch-out {family}: {figures(total)}; chosen per batch: {' '.join(chosen)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", help="base, limit:N, v5:N, vec:K, v5q:D or sentences")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--report", type=Path, nargs="+")
    parser.add_argument("--fit-qmap", type=Path, help="write the v5 -> v2 quantile map `v5:D` variants read")
    args = parser.parse_args(argv)
    if args.fit_qmap:
        collect_pairs(args.fit_qmap)
        return 0
    if args.report:
        report(args.report)
        return 0
    if not args.variant or not args.out:
        parser.error("--variant and --out, or --report")
    run(args.variant, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
