"""Whisper over the labelled stores: hit rate, precision and silence on the dev and test splits.

    python -m bench.whisper_stores [--split dev|test|both] [--show] [--sweep [--dump FILE]] [--gate-dump FILE]
                                   [--write-docs] [--database-url postgres://...]

Loads the stores whisper.json names (docs, lifelog, devprojects, club, home) into one fresh temporary home through the real
services (document vectors come from a disk cache of the real model's output: bench/datasets/embed_cache.py),
then runs every scenario of bench/datasets/whisper.json through whisper_respond at the scenarios' fixed clock
(history prompts first, in the same session). Scores per split:

* hit rate: should-inject prompts that got at least one expected memory / should-inject prompts
* precision: injected memories that are expected or accepted / all injected memories (silent prompts included)
* silence: should-stay-silent prompts that got nothing / should-stay-silent prompts

`--gate-dump FILE` runs the split the same way and also writes what reached the gate in every call (with the recall
hits the overlap filter dropped), for bench/whisper_gate_fit.py; with `--shape` also the store's shape (hubness, spread:
a full n x n similarity matrix; off by default, no fit reads it).

`--database-url` (default ORMAH_DATABASE_URL) runs on that PostgreSQL server instead of SQLite, in a fresh
database made for the run and dropped after it (scripts/pg-cluster.sh starts a throwaway server). The gate dump's
vocabulary counts ("vocabulary") read FTS5 and stay empty there.

`--sweep` runs the split with the gate open, reads every candidate's gate score from the decision ledger and
prints hit rate, precision and silence per gate threshold: that is how the gate is tuned, on dev only
(bench/whisper_stores_sweep.py).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from bench._common import write_block
from bench.whisper_quality import Outcome, run_prompt, score, scratch_database, setup_django
from bench.whisper_stores_show import SECTION, print_metrics, print_outcomes, render
from bench.whisper_stores_sweep import open_gates, print_sweep, sweep

EMBEDDER = "bench.datasets.embed_cache.CachedEmbedder"


def seed_stores() -> tuple[dict[str, str], object]:
    """Write the scenarios' stores into the current home; returns (key -> node id, the whisper scenarios)."""
    from bench.datasets.loader import load_whisper, merged_memories
    from bench.recall.harness import Dataset, seed

    scenarios = load_whisper()
    memories, edges = merged_memories(scenarios.stores)
    ds = Dataset(now=scenarios.now, self_name="Noor Haddad", memories=memories, edges=edges, queries=())
    return seed(ds, auto_link=False), scenarios


def run_one(prompt: dict, ids: dict[str, str], *, now) -> Outcome:
    """run_prompt, and a memory the history already put in the agent's context counts as delivered: a follow-up
    whose memory came with the previous answer is right to stay silent about it."""
    from whisper.models import WhisperDecisionRow

    outcome = run_prompt(prompt, ids, now=now)
    if prompt.get("history") and prompt["kind"] == "inject" and not set(prompt["expect"]) & set(outcome.injected):
        keys = {v: k for k, v in ids.items()}
        earlier = WhisperDecisionRow.objects.filter(session_id=f"bench-{prompt['id']}", decision="injected")
        served = {keys.get(n, n) for row in earlier for n in row.node_ids}
        if set(prompt["expect"]) & served:
            outcome.decision += " (served by the history)"
            outcome.served_before = sorted(set(prompt["expect"]) & served)
    return outcome


def run_split(prompts, ids: dict[str, str], now) -> list[Outcome]:
    return [run_one(p, ids, now=now) for p in prompts]


def metrics(outcomes: list[Outcome]) -> dict[str, float]:
    s = score(outcomes)
    lat = sorted(o.elapsed_ms for o in outcomes)
    return {"prompts": len(outcomes), "inject": s.inject_total, "silent": s.silent_total,
            "hit_rate": s.inject_hit / s.inject_total if s.inject_total else 1.0, "hits": s.inject_hit,
            "precision": s.precision, "correct": s.correct, "injected": s.injected,
            "silence": s.silence_accuracy, "silent_ok": s.silent_ok,
            "p50": lat[len(lat) // 2], "p95": lat[min(len(lat) - 1, int(len(lat) * 0.95))]}


def per_category(outcomes: list[Outcome]) -> dict[str, list[int]]:
    return dict(sorted(score(outcomes).by_category.items()))


@contextmanager
def recording_gate(keys: dict[str, str], *, shape: bool = False):
    """Record what reaches the injection gate in every whisper_respond call (the production path, production
    settings): per call, each candidate's key, its route (identity gate, strong-cosine only, or the logistic gate),
    raw cosine, ordering score and the logistic gate's inputs (whisper.stages.gate.gate_inputs). Yields the list
    of calls; a call that ended before the gate records None. With `shape`, each row also holds the store's shape
    (StoreShape: "spread", "hub"; a full n x n similarity matrix, inputs session 13 tried and did not keep); without
    it both are None."""
    import whisper.pipeline as pipeline
    import whisper.services.respond as respond
    from whisper.classifier import IDENTITY
    from memory.ranking.features import query_terms, stems
    from whisper.stages import focus, gate, scoring
    from whisper.state import STAGE_OVERLAP
    from whisper.text import topic_tokens

    calls: list[list[dict] | None] = []

    def row(c, run, route: str, inputs) -> dict:
        text, tags = (c.hit.content, c.hit.tags) if c.hit is not None else (c.content, ())
        return {"key": keys.get(c.node_id, c.node_id), "cosine": c.raw_cosine or 0.0, "score": c.score,
                "recall": c.probability is not None, "space": c.space, "target": run.target_space,
                "type": c.type, "identity": c.identity, "overlap": c.overlap,
                "g": (c.probability or 0.0) + c.affinity,
                "chars": len(c.hit.content) if c.hit is not None else len(c.content),
                "passage": bool(c.hit is not None and c.hit.passage), "route": route, "inputs": inputs,
                "follow_up": run.follow_up, "fts_rank": c.hit.fts_rank if c.hit is not None else None,
                "vector_rank": c.hit.vector_rank if c.hit is not None else None,
                "title_overlap": bool(topic_tokens(run.query or run.prompt) & topic_tokens(c.title or "")),
                "terms": sorted(set(query_terms(run.prompt)) & set(stems(f"{c.title} {text} {' '.join(tags)}"))),
                "off_focus": focus.off_focus(run.prompt, title=c.title, content=c.content, tags=focus.labels(c),
                                             node_type=c.type, created=c.created) is not None,  # as focus_check
                "own_titled": gate.own_titled(c, run), "recap": False, "space_factor": c.space_factor,
                "created": c.created.isoformat(), "recall_p": c.hit.score if c.hit is not None else None,
                "id_score": gate.gate_score(c, by_cosine=True), "standout": c.node_id in run.standouts,
                "standing": c.standing}

    def no_overlap(run) -> list[dict]:
        """Recall hits the overlap filter dropped (route "no_overlap"; what an open filter would hand the gate)."""
        return [row(c, run, "no_overlap", None) for c in run.candidates
                if c.stage == STAGE_OVERLAP and c.probability is not None and c.ce_abs is None]

    store = StoreShape() if shape else None

    def observed(run, conf, deps):
        vocabulary = prompt_vocabulary(run.prompt)
        spread = store and store.spread(run.query_vec,
                                        [c.raw_cosine or 0.0 for c in run.candidates if c.probability is not None])
        served = deps.served() if run.request.session_id else frozenset()  # already in the agent's context
        inputs = gate.gate_inputs(run, gate.logistic_hits(run), deps)
        share = conf.gate_relative if run.intent is not None and run.intent.has(IDENTITY) else conf.identity_fact_share
        rows_ = [c.hit.row_id for c in run.pool if c.hit is not None]
        alone = deps.cosines(run.prompt_vec, rows_) if run.follow_up and run.prompt_vec is not None else {}
        joined = deps.cosines(run.query_vec, rows_) if run.follow_up and run.query_vec is not None else {}
        calls[-1] = [row(c, run, "identity" if gate.identity_route(c, run) else "logistic" if id(c) in inputs
                         else "cosine", inputs.get(id(c))) | {"share": share, "served": c.node_id in served,
                                                   "cos_alone": alone.get(c.hit.row_id) if c.hit is not None else None,
                                                   "cos_joined": joined.get(c.hit.row_id) if c.hit is not None else None,
                                                   "vocabulary": vocabulary, "spread": spread,
                                                   "hub": store.hub(c.hit.row_id) if store and c.hit is not None else None}
                     for c in run.pool] + no_overlap(run)
        return gate.injection_gate(run, conf, deps)

    def overlap_observed(run, conf, deps):
        silent = scoring.topical_overlap(run, conf, deps)
        if silent is not None:
            calls[-1] = no_overlap(run)
        return silent

    swap = {gate.injection_gate: observed, scoring.topical_overlap: overlap_observed}
    stages = tuple(swap.get(s, s) for s in pipeline.STAGES)
    original = respond.run_stages

    def run_stages(run, conf, deps, _stages=stages):
        calls.append(None)
        return original(run, conf, deps, _stages)

    respond.run_stages = run_stages
    try:
        yield calls
    finally:
        respond.run_stages = original


class StoreShape:
    """How the store's vectors lie, for gate inputs that put a raw cosine on a common scale (read once per run, the
    store does not change while the scenarios run): each memory's hubness (the mean cosine to its HUB_K nearest
    other memories, CSLS-style) and, per call, the query's cosines to every memory (mean, spread, the mean of its
    nearest) and to recall's hits."""

    HUB_K = (5, 10)

    def __init__(self) -> None:
        self._ids: list[int] | None = None
        self._hub: dict[int, dict[str, float]] = {}

    def _load(self) -> None:
        if self._ids is not None:
            return
        import numpy as np
        from django.db import connection

        from memory.search import vectors

        with connection.cursor() as cur:
            cur.execute("SELECT id FROM memory_noderow")
            ids = [r[0] for r in cur.fetchall()]
        stored = vectors.get_many(ids)
        self._ids = [i for i in ids if i in stored]
        m = np.stack([stored[i] for i in self._ids]).astype(np.float64)
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        sims = m @ m.T
        np.fill_diagonal(sims, -np.inf)
        top = -np.sort(-sims, axis=1)
        mean_other = (np.where(np.isinf(sims), 0.0, sims).sum(axis=1)) / max(1, len(self._ids) - 1)
        for j, i in enumerate(self._ids):
            self._hub[i] = {f"k{k}": float(top[j, :k].mean()) for k in self.HUB_K} | {"all": float(mean_other[j])}

    def hub(self, row_id: int) -> dict[str, float] | None:
        self._load()
        return self._hub.get(row_id)

    def spread(self, vec, hit_cosines: list[float]) -> dict | None:
        if vec is None:
            return None
        import numpy as np

        from memory.search.semantic import cosine_map

        self._load()
        cos = np.array(sorted(cosine_map(vec, self._ids).values(), reverse=True))
        return {"mean": float(cos.mean()), "std": float(cos.std()), "median": float(np.median(cos)),
                **{f"top{k}": float(cos[:k].mean()) for k in (5, 10, 20, 54)}, "hits": hit_cosines}


def prompt_vocabulary(prompt: str) -> dict:
    """The prompt's content words (recall's stems) and, per space ("" for global memories), how many memories hold
    each and how many memories there are: for gate inputs on the store's vocabulary (bench/whisper_gate_fit.py)."""
    from django.db import connection

    from memory.ranking.features import query_terms

    counts = {}
    if connection.vendor != "sqlite":  # the FTS5 table; the vocabulary inputs read nothing elsewhere
        return {"sizes": {}, "counts": {}}
    with connection.cursor() as cur:
        cur.execute("SELECT coalesce(space, ''), count(*) FROM memory_noderow GROUP BY 1")
        sizes = dict(cur.fetchall())
        for term in query_terms(prompt):
            cur.execute("SELECT coalesce(n.space, ''), count(*) FROM node_fts f JOIN memory_noderow n ON n.id = f.rowid "
                        "WHERE node_fts MATCH %s GROUP BY 1", ['"' + term.replace('"', '""') + '"'])
            counts[term] = dict(cur.fetchall())
    return {"sizes": sizes, "counts": counts}


def gate_dump(prompts, ids: dict[str, str], now, path: Path, *, shape: bool = False) -> list[Outcome]:
    """Run the split through the real path (history first, same session) and write, per prompt, what reached the
    gate in each call: the input of bench/whisper_gate_fit.py. The gate's own threshold does not change what
    reaches it (only a history prompt's served memories, which the fit simulates per threshold). Returns the
    outcomes, scored as a plain run's."""
    keys = {v: k for k, v in ids.items()}
    out, outcomes = [], []
    with recording_gate(keys, shape=shape) as calls:
        for p in prompts:
            calls.clear()
            outcomes.append(run_one(p, ids, now=now))
            out.append({"prompt": p, "calls": list(calls)})
    path.write_text(json.dumps(out))
    return outcomes


def cpu_ab(prompts, now, rounds: int) -> None:
    """CPU per whisper_respond call with the per-project pass on and off, the two interleaved prompt by prompt (each
    prompt alone, a new session per call: no history), `rounds` times; prints the medians and means per call, for
    every prompt and for those asked inside a project (the only ones the pass adds a recall to)."""
    import statistics

    from django.conf import settings

    from whisper.services import whisper_respond

    took: dict[tuple[bool, bool], list[float]] = {(on, inside): [] for on in (True, False) for inside in (True, False)}
    for r in range(rounds):
        for i, p in enumerate(prompts):
            for on in ((True, False) if (i + r) % 2 else (False, True)):
                settings.ORMAH["WHISPER_PROJECT_PASS"] = on
                started = time.process_time()
                whisper_respond(prompt=p["prompt"], session_id=f"cpu-{r}-{on}-{p['id']}", space=p.get("space"), now=now)
                took[on, p.get("space") is not None].append((time.process_time() - started) * 1000)
    settings.ORMAH.pop("WHISPER_PROJECT_PASS", None)
    load = open("/proc/loadavg").read().split()[:3]
    print(f"CPU ms per whisper call, {rounds} rounds, load {' '.join(load)}:")
    for inside in (True, False):
        off, on = took[False, inside], took[True, inside]
        print(f"  {'inside a project' if inside else 'outside any project'} ({len(off) // rounds} prompts): "
              f"off median {statistics.median(off):.1f} mean {statistics.fmean(off):.1f}; on median "
              f"{statistics.median(on):.1f} mean {statistics.fmean(on):.1f}; ratio of means "
              f"{statistics.fmean(on) / statistics.fmean(off):.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--batch", type=int, help="only the prompts of this labelling round (`batch`, 1 if absent)")
    parser.add_argument("--show", action="store_true", help="print every prompt's outcome")
    parser.add_argument("--explain", action="store_true", help="print the candidates of every wrong prompt")
    parser.add_argument("--sweep", action="store_true", help="sweep the gate on the split (tune on dev only)")
    parser.add_argument("--sweep-json", type=Path, help="also write every swept setting and its scores here")
    parser.add_argument("--dump", type=Path, help="with --sweep: write every prompt's gate candidates here (JSON)")
    parser.add_argument("--gate-dump", type=Path,
                        help="write what reaches the gate per prompt, production settings (bench/whisper_gate_fit.py)")
    parser.add_argument("--shape", action="store_true",
                        help="with --gate-dump: also record the store's shape (hubness, spread; a full n x n matrix)")
    parser.add_argument("--no-project-pass", action="store_true",
                        help="without whisper's second recall over the prompt's project (WHISPER_PROJECT_PASS off)")
    parser.add_argument("--cpu-ab", type=int, metavar="ROUNDS",
                        help="CPU per call with the per-project pass on and off, interleaved (no scores)")
    parser.add_argument("--write-docs", action="store_true",
                        help="replace its marked block in docs/benchmarks.md (records below it stay)")
    parser.add_argument("--database-url", default=os.environ.get("ORMAH_DATABASE_URL") or None,
                        help="run on this PostgreSQL server (default: ORMAH_DATABASE_URL; unset: SQLite), in a "
                             "fresh database of its own made for the run and dropped after it")
    args = parser.parse_args(argv)
    if args.database_url and args.write_docs:
        parser.error("--write-docs records the SQLite run; leave --database-url and ORMAH_DATABASE_URL unset")
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    if args.sweep:
        open_gates()
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    with (tempfile.TemporaryDirectory(prefix="ormah-whisper-stores-") as tmp,
          scratch_database(args.database_url, f"ormah_whisper_stores_{os.getpid()}") as database_url):
        setup_django(Path(tmp), database_url)
        from django.db import connection

        print(f"index: {connection.vendor}", file=sys.stderr)
        if args.no_project_pass:
            from django.conf import settings

            settings.ORMAH["WHISPER_PROJECT_PASS"] = False
        started = time.process_time()
        ids, scenarios = seed_stores()
        print(f"seeded {len(ids)} memories in {time.process_time() - started:.1f} s CPU", file=sys.stderr)
        results, categories = {}, {}
        for split in splits:
            prompts = [p for p in scenarios.prompts_in(split) if args.batch in (None, p.get("batch", 1))]
            if args.cpu_ab:
                cpu_ab(prompts, scenarios.now, args.cpu_ab)
                continue
            if args.sweep:
                table = sweep(prompts, ids, scenarios.now, args.dump)
                if args.sweep_json:
                    args.sweep_json.write_text(json.dumps([[*k, *v] for k, v in table.items()]))
                print_sweep(table, split, len(prompts))
                continue
            if args.gate_dump:
                outcomes = gate_dump(prompts, ids, scenarios.now, args.gate_dump, shape=args.shape)
            else:
                outcomes = run_split(prompts, ids, scenarios.now)
            results[split], categories[split] = metrics(outcomes), per_category(outcomes)
            print_outcomes(split, outcomes, ids, show=args.show, explain_wrong=args.explain)
            print_metrics(split, results[split])
        if results:
            from whisper.conf import get_conf as whisper_conf

            conf = whisper_conf()
            if conf.gate_weights:
                note = (f"Logistic gate (log-odds >= {conf.gate_logit}, bench/whisper_gate_fit.py), identity gate "
                        f"{conf.identity_gate} on cosine ({conf.identity_gate_no_word} without a shared word, best "
                        "identity memories only); fitted and tuned on dev only.")
            else:
                note = (f"Gate {conf.gate_no_reranker} on recall's probability, relative {conf.gate_relative}, "
                        f"identity gate {conf.identity_gate} on cosine; tuned on dev only.")
            text = render(results, categories, note)
            print(text)
            if args.write_docs:
                write_block("whisper_stores", text.removeprefix(SECTION + "\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
