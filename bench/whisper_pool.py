"""Where a should-inject prompt's expected memory ranks in whisper's pool, per recall leg (dev split only).

    python -m bench.whisper_pool [--batch N] [--show]

Runs the dev prompts of bench/datasets/whisper.json through whisper_respond exactly as bench.whisper_stores does
(same stores, clock and sessions) and, for every should-inject prompt, records after the retrieve stage: whether an
expected memory is in whisper's pool (the candidates), its rank in a wider recall of the same query (limit
WIDE, same tiers and project), its rank by BM25 alone (memory.search.fts over every memory, AND then OR) and by
cosine alone (the query vector against every stored vector), and that cosine. Prints the whisper figures for
the dev batches and the fresh batch (bench.whisper_gate_fit.FRESH_BATCHES) apart, and the pool table: in the pool /
fused rank beyond it up to WIDE / nowhere in WIDE, with the legs' ranks of the best-placed expected memory. --show
lists the fresh batch's misses only when asked for by --batch (design on the others; issue 11). Never the test split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES
from bench.whisper_quality import setup_django
from bench.whisper_stores import EMBEDDER, metrics, run_one, seed_stores

WIDE = 50
GROUPS = (("batches 1-11", lambda b: b not in FRESH_BATCHES), ("batch 12 (fresh)", lambda b: b in FRESH_BATCHES))


@contextmanager
def recording_pool(ids: dict[str, str], top: int = 0):
    """After whisper's retrieve stage in every call, record the pool and where the expected memories rank; with
    `top`, also the `top` memories nearest the query (key, cosine, z: its standard score over every stored memory)."""
    import numpy as np
    from django.db import connection

    import whisper.pipeline as pipeline
    import whisper.services.respond as respond
    from memory.domain.enums import Tier
    from memory.domain.search import SearchQuery
    from memory.search import vectors
    from memory.search.fts import fts_search
    from whisper.stages import retrieve as retrieve_module

    keys = {v: k for k, v in ids.items()}
    with connection.cursor() as cur:
        cur.execute("SELECT id, uid FROM memory_noderow")
        row_of = {uid: rid for rid, uid in cur.fetchall()}
    stored = vectors.get_many(list(row_of.values()))
    row_ids = list(stored)
    matrix = np.stack([stored[r] for r in row_ids]).astype(np.float64)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    calls: list[dict] = []

    def observed(run, conf, deps):
        decision = retrieve_module.retrieve(run, conf, deps)
        wide = deps.search(SearchQuery(query=run.query or run.prompt, limit=WIDE, tiers=[Tier.CORE, Tier.WORKING],
                                       default_space=run.target_space, min_score=0.0, activation=conf.activation))
        cos, nearest = {}, []
        if run.query_vec is not None:
            q = np.asarray(run.query_vec, dtype=np.float64)
            sims = matrix @ (q / np.linalg.norm(q))
            order = np.argsort(-sims)
            cos = {row_ids[i]: (float(sims[i]), rank) for rank, i in enumerate(order, start=1)}
            mean, spread = float(sims.mean()), float(sims.std()) or 1.0
            uid_of = {r: u for u, r in row_of.items()}
            nearest = [{"key": keys.get(uid_of[row_ids[i]], uid_of[row_ids[i]]), "cosine": round(float(sims[i]), 4),
                        "z": round((float(sims[i]) - mean) / spread, 3)} for i in order[:top]]
        fts = {h.row_id: h.rank for h in fts_search(run.query or run.prompt, 2000)}
        calls.append({"pool": [keys.get(c.node_id, c.node_id) for c in run.candidates],
                      "wide": [keys.get(h.node_id, h.node_id) for h in wide],
                      "cos": {keys.get(u, u): cos.get(r) for u, r in row_of.items() if r in cos},
                      "fts": {keys.get(u, u): fts.get(r) for u, r in row_of.items() if r in fts},
                      "route": route(run), "top": nearest, "target": run.target_space})
        return decision

    stages = tuple(observed if s is retrieve_module.retrieve else s for s in pipeline.STAGES)
    original = respond.run_stages

    def run_stages(run, conf, deps, _stages=stages):
        return original(run, conf, deps, _stages)

    respond.run_stages = run_stages
    try:
        yield calls
    finally:
        respond.run_stages = original


def route(run) -> str:
    """The retrieve stage's reading of the prompt: intent categories, then I (an identity question), U (about the
    user), T (a task a convention may govern), Q (a question after context, searched alone), N (another project
    named: the target space)."""
    from whisper.asked import asked
    from whisper.conventions import governs_task

    flags = "".join(f for f, on in (("I", run.identity_question), ("U", run.about_user),
                                    ("T", governs_task(run.prompt)), ("Q", asked(run.prompt) is not None),
                                    ("N", run.target_space != run.request.space)) if on)
    return f"{run.intent.label if run.intent else '-'}:{flags or '-'}"


def placement(prompt: dict, call: dict | None) -> dict:
    """The best-placed expected memory of a prompt: in the pool, its wide rank, its BM25 and cosine ranks."""
    best = None
    for key in prompt["expect"]:
        wide = call["wide"].index(key) + 1 if call and key in call["wide"] else None
        cos = call["cos"].get(key) if call else None
        row = {"key": key, "pool": bool(call and key in call["pool"]), "wide": wide,
               "fts": call["fts"].get(key) if call else None,
               "cosine": cos[0] if cos else None, "cos_rank": cos[1] if cos else None}
        if call and "route" in call:
            row["route"] = call["route"]
        rank = (not row["pool"], wide or WIDE + 1, row["cos_rank"] or 10 ** 6)
        if best is None or rank < best[0]:
            best = (rank, row)
    return best[1]


def where(row: dict) -> str:
    if row["pool"]:
        return "pool"
    return "wide" if row["wide"] else "nowhere"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, help="only this batch's dev prompts")
    parser.add_argument("--show", action="store_true", help="print every should-inject prompt's placement")
    parser.add_argument("--outcomes", type=Path, help="write every prompt's id, decision and injected keys (JSON)")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-pool-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        prompts = [p for p in scenarios.prompts_in("dev") if args.batch in (None, p.get("batch", 1))]
        outcomes, rows = [], []
        with recording_pool(ids) as calls:
            for p in prompts:
                calls.clear()
                outcome = run_one(p, ids, now=scenarios.now)
                outcomes.append(outcome)
                if p["kind"] == "inject":
                    hit = bool(set(p["expect"]) & set(outcome.injected)) or bool(outcome.served_before)
                    rows.append((p, hit, placement(p, calls[-1] if calls else None)))
        for name, member in GROUPS:
            group = [o for o in outcomes if member(o.prompt.get("batch", 1))]
            if not group:
                continue
            m = metrics(group)
            print(f"{name}: hit {m['hit_rate']:.3f} ({m['hits']}/{m['inject']}) / precision {m['precision']:.3f} "
                  f"({m['correct']}/{m['injected']}) / silence {m['silence']:.3f} ({m['silent_ok']}/{m['silent']})")
            mine = [r for r in rows if member(r[0].get("batch", 1))]
            missed = [r for r in mine if not r[1]]
            for label, subset in (("all should-inject", mine), ("missed", missed)):
                counts = {k: sum(where(r[2]) == k for r in subset) for k in ("pool", "wide", "nowhere")}
                print(f"  {label} ({len(subset)}): expected in pool {counts['pool']}, fused rank past the pool "
                      f"within {WIDE} {counts['wide']}, not in {WIDE} {counts['nowhere']}")
        if args.outcomes:
            args.outcomes.write_text(json.dumps({o.prompt["id"]: [o.decision, o.injected] for o in outcomes}))
        if args.show:
            for p, hit, r in rows:
                if hit or (p.get("batch", 1) in FRESH_BATCHES and args.batch is None):
                    continue
                cos = f"{r['cosine']:.2f}#{r['cos_rank']}" if r["cosine"] is not None else "-"
                print(f"{p['id']:6} b{p.get('batch', 1)} {p.get('category', '-')[:10]:10} {where(r):7} {r['key']:6} wide={r['wide']} fts={r['fts']} "
                      f"cos={cos} {r.get('route', '-')} :: {p['prompt'][:90]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
