"""Where a should-inject prompt's expected memory ranks in whisper's pool, per recall leg (dev split only).

    python -m bench.whisper_pool [--batch N] [--show]

Runs the dev prompts of bench/datasets/whisper.json through whisper_respond exactly as bench.whisper_stores does
(same stores, clock and sessions) and, for every should-inject prompt, records after the retrieve stage: whether an
expected memory is in whisper's pool (the candidates), its rank in a wider recall of the same query (limit
WIDE, same tiers and project), its rank by BM25 alone (memory.search.fts over every memory, AND then OR) and by
cosine alone (the query vector against every stored vector), and that cosine. Prints the whisper figures for
the dev batches and the fresh batch (bench.whisper_gate_fit.FRESH_BATCHES) apart, and the pool table: in the pool /
fused rank beyond it up to WIDE / nowhere in WIDE, with the legs' ranks of the best-placed expected memory. --stages
adds, per category, where each prompt's expected memories stopped (the furthest-going one: `lost_at`): before
retrieval, not in recall's WIDE, ranked past the pool, or in the pool and dropped at the floor, the overlap filter,
the gate, focus, ...; and whisper's CPU per call (time.process_time around the stages, the retrieve stage apart; the
bench's own wide recall and leg ranks are not counted). --show lists the fresh batch's misses only when asked for by
--batch (design on the others; issue 11). Never the test split.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES
from bench.whisper_pool_variants import variant
from bench.whisper_quality import setup_django
from bench.whisper_stores import EMBEDDER, metrics, run_one, seed_stores

WIDE = 50
GROUPS = (("batches 1-17", lambda b: b not in FRESH_BATCHES), ("batch 18 (fresh)", lambda b: b in FRESH_BATCHES))


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
        started = time.process_time()
        decision = retrieve_module.retrieve(run, conf, deps)
        cpu = time.process_time() - started
        observing = time.process_time()
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
                      "route": route(run), "top": nearest, "target": run.target_space,
                      "prompt": run.prompt, "run": run, "retrieve_cpu": cpu})
        calls[-1]["observer_cpu"] = time.process_time() - observing
        return decision

    stages = tuple(observed if s is retrieve_module.retrieve else s for s in pipeline.STAGES)
    original = respond.run_stages

    def run_stages(run, conf, deps, _stages=stages):
        started = time.process_time()
        before = len(calls)
        try:
            return original(run, conf, deps, _stages)
        finally:
            cpu = time.process_time() - started
            if len(calls) > before:  # the observer's own wide recall and leg ranks are not whisper's
                calls[-1]["stages_cpu"] = cpu - calls[-1].pop("observer_cpu", 0.0)

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


# Where an expected memory stopped, furthest last: before retrieval (the call ended earlier), not among recall's WIDE,
# ranked past whisper's pool, then the stage that dropped it from the pool (whisper.state's STAGE_* names), "pool"
# when it was still in the pool when a stage ended the call silent, and "injected".
LOSS_ORDER = ("before retrieval", "not in 50", "rank 7-50", "below_floor", "below_post_rerank_floor",
              "identity_space", "no_overlap", "below_gate", "off_focus", "pool", "already_served", "cap", "budget",
              "injected")
_INJECTED = ("injected", "exploration")


def final_call(prompt_text: str, calls: list[dict]) -> dict | None:
    """The call of the prompt itself (not of a history prompt before it), or None when it ended before retrieval."""
    from whisper.text import slash_command_text

    typed = slash_command_text(prompt_text) or prompt_text
    return calls[-1] if calls and calls[-1].get("prompt") in (prompt_text, typed) else None


def lost_at(expect: list[str], call: dict | None, stage_of: dict[str, str] | None = None) -> str:
    """Where the furthest-going of the expected memories stopped (a LOSS_ORDER label). `stage_of`: each pool
    memory's key -> the stage it ended at (Candidate.stage; "candidate" when no stage dropped it)."""
    if call is None:
        return LOSS_ORDER[0]
    stage_of = stage_of or {}
    best = 1
    for key in expect:
        if key in stage_of:
            stage = stage_of[key]
            label = "injected" if stage in _INJECTED else "pool" if stage == "candidate" else stage
        elif key in call["wide"][:WIDE]:
            label = "rank 7-50"
        else:
            label = "not in 50"
        best = max(best, LOSS_ORDER.index(label))
    return LOSS_ORDER[best]


def stages_of(call: dict | None, keys: dict[str, str]) -> dict[str, str]:
    """Each candidate's key -> the stage it ended at, read off the recorded run after the call."""
    if call is None or "run" not in call:
        return {}
    return {keys.get(c.node_id, c.node_id): c.stage for c in call["run"].candidates}


def gate_margin(expect: list[str], call: dict | None, keys: dict[str, str]) -> tuple[str, int, float] | None:
    """For a prompt whose expected memories stopped at the gate: the best one's gate route ("logistic": the
    logistic gate, in log-odds; "cosine": the identity and preference routes, in cosine; "other"), recall rank and
    gate score less its threshold; None when none reached the gate with a threshold."""
    from whisper.conf import get_conf
    from whisper.stages.gate import identity_route

    if call is None or "run" not in call:
        return None
    logit, best = get_conf().gate_logit, None
    for c in call["run"].candidates:
        if keys.get(c.node_id) in expect and c.gate_score is not None and c.gate_threshold is not None:
            kind = ("cosine" if identity_route(c, call["run"]) else
                    "logistic" if c.gate_threshold == logit else "other")
            row = (kind, c.retrieval_rank or 0, round(c.gate_score - c.gate_threshold, 3))
            best = row if best is None or row[2] > best[2] else best
    return best


MARGINS = {"logistic": (-0.25, -0.5, -1.0, -2.0), "cosine": (-0.05, -0.1, -0.2), "other": (-0.1, -0.5)}


def print_margins(margins: list[tuple[str, int, float]], pool_size: int = 6) -> None:
    """How far below its threshold the gate put the expected memories of prompts lost at the gate, per route (its
    own units), by whether recall ranked them within whisper's first `pool_size` or past them (a wider pool)."""
    for kind, steps in MARGINS.items():
        for label, mine in (("recall rank 1-6", [m for k, r, m in margins if k == kind and r <= pool_size]),
                            ("recall rank 7+", [m for k, r, m in margins if k == kind and r > pool_size])):
            if not mine:
                continue
            edges = [0.0, *steps]
            counts = [sum(lo <= m < hi for m in mine) for hi, lo in zip(edges, edges[1:])]
            print(f"  {kind}, {label} ({len(mine)}): " + ", ".join(
                f"[{lo}, {hi}) {n}" for (hi, lo), n in zip(zip(edges, edges[1:]), counts))
                + f", below {edges[-1]} {sum(m < edges[-1] for m in mine)}")


def print_losses(rows: list[tuple[dict, bool, str]]) -> None:
    """Per category: should-inject prompts, hits, and where the misses' expected memories stopped."""
    shown = [label for label in LOSS_ORDER if label != "injected"]
    print("| category | should inject | hit | " + " | ".join(shown) + " |")
    print("|---|" + "---:|" * (2 + len(shown)))
    cats = sorted({r[0].get("category", "-") for r in rows})
    for cat in ["all", *cats]:
        mine = [r for r in rows if cat == "all" or r[0].get("category", "-") == cat]
        missed = Counter(r[2] for r in mine if not r[1])
        print(f"| {cat} | {len(mine)} | {sum(r[1] for r in mine)} | "
              + " | ".join(str(missed.get(label, 0)) for label in shown) + " |")


def where(row: dict) -> str:
    if row["pool"]:
        return "pool"
    return "wide" if row["wide"] else "nowhere"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, help="only this batch's dev prompts")
    parser.add_argument("--show", action="store_true", help="print every should-inject prompt's placement")
    parser.add_argument("--stages", action="store_true",
                        help="per category, where the misses' expected memories stopped; whisper's CPU per call")
    parser.add_argument("--variant", default="base",
                        help="a change to the pool (bench.whisper_pool_variants: limit:N, v5:N, vec:K, sentences)")
    parser.add_argument("--outcomes", type=Path, help="write every prompt's id, decision and injected keys (JSON)")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-pool-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        prompts = [p for p in scenarios.prompts_in("dev") if args.batch in (None, p.get("batch", 1))]
        outcomes, rows, losses, cpu, margins = [], [], [], [], []
        keys = {v: k for k, v in ids.items()}
        with variant(args.variant), recording_pool(ids) as calls:
            for p in prompts:
                calls.clear()
                outcome = run_one(p, ids, now=scenarios.now)
                outcomes.append(outcome)
                call = final_call(p["prompt"], calls)
                cpu += [(c.get("retrieve_cpu", 0.0), c.get("stages_cpu", 0.0)) for c in calls]
                if p["kind"] == "inject":
                    hit = bool(set(p["expect"]) & set(outcome.injected)) or bool(outcome.served_before)
                    rows.append((p, hit, placement(p, call)))
                    losses.append((p, hit, lost_at(p["expect"], call, stages_of(call, keys))))
                    if not hit and losses[-1][2] == "below_gate" and p.get("batch", 1) not in FRESH_BATCHES:
                        margins.append(gate_margin(p["expect"], call, keys))
                for c in calls:
                    c.pop("run", None)  # the run's candidates hold recall hits: not kept past the prompt
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
        if args.stages:
            fit = [r for r in losses if r[0].get("batch", 1) not in FRESH_BATCHES]
            print(f"where the misses' expected memories stopped, dev batches outside {sorted(FRESH_BATCHES)}:")
            print_losses(fit)
            print("gate score less threshold of the misses lost at the gate:")
            print_margins([m for m in margins if m is not None])
            fresh = [r for r in losses if r[0].get("batch", 1) in FRESH_BATCHES]
            if fresh:  # the held-out batch: aggregates only
                missed = Counter(r[2] for r in fresh if not r[1])
                print(f"fresh batch misses: {dict(sorted(missed.items(), key=lambda kv: LOSS_ORDER.index(kv[0])))}")
            if cpu:
                spent = [1000 * sum(c[i] for c in cpu) / len(cpu) for i in (0, 1)]
                print(f"whisper CPU per call (ms, {len(cpu)} calls reaching retrieval): retrieve stage "
                      f"{spent[0]:.1f}, all stages {spent[1]:.1f}")
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
