"""The identity route's gate as the identity set grows: session 27's candidates (issue 11; docs/benchmarks.md
"Whisper identity route, session 27").

    python -m bench.whisper_ident17 show today > RUN.txt              # one dev 1-17 run (--split dev --show)
    python -m bench.whisper_ident17 show setz --z 2.5 > RUN.txt       # a candidate, installed in this process only
    python -m bench.whisper_ident17 show clause > RUN.txt
    python -m bench.whisper_ident17 show setz --z 3.0 --batch 18      # rule 4's run: batch 18 dev alone
    python -m bench.whisper_ident17 routes today --plain choir --json R.json   # the route's precision, a smaller set
    python -m bench.whisper_identity choose BASE.txt RUN.txt ...      # the setting left out by batch and by store

On an identity question about the user (identity intent, or a short question about a fact of the user's own) an
identity memory passes on its cosine: `identity_gate` (0.25) when it shares a word with the prompt, else
`identity_gate_no_word` (0.35). The candidates:

- today: as shipped (the control).
- setz: the memory must also stand out of the identity set for this prompt: its leave-one-out standard score among
  the set's cosines to the query (`whisper.conventions.standout_scores`) at least --z. A memory outside the set
  (tagged `about_self`, not defined by the self node) or a set too small to measure keeps today's gate.
- clause: on a prompt whose question about the user is one clause of it (`whisper.stages.retrieve.user_question`
  returns a clause; no follow-up), the shared word that earns `identity_gate` is read from the clause alone, as the
  overlap filter reads words (`topic_tokens`, and the kind of fact a general word asks for); a memory sharing a word
  only with the context faces `identity_gate_no_word`.

`routes` runs dev 1-17's prompts (the held-out batches left out) through bench.whisper_routes' recorder and prints
the identity route's right / passed; `--plain STORE` makes that store's `about_self` memories ordinary memories (the
identity set shrinks, every memory stays) and leaves out the prompts whose labels name the store or that are about
it (`bench.whisper_null.touches`), so runs with different --plain compare on the same prompts when given the same
`--skip`. Nothing here edits a file: each variant is installed in this process only.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path

VARIANTS = ("today", "setz", "clause")
_CURRENT: dict[str, object] = {}  # the call's deps, set by the wrapped run_stages (the gate's threshold sees no deps)


def set_scores(run, deps) -> dict[str, float]:
    """Node id -> leave-one-out standard score of each identity-set memory's cosine to the run's query vector (the
    vector the identity gate's cosines are measured with); {} when the set is too small or there is no vector."""
    from whisper.conventions import standout_scores

    if run.query_vec is None or deps is None:
        return {}
    members = deps.identity()
    by_row = {h.row_id: h.node_id for h in members if h.row_id is not None}
    cosines = {by_row[r]: c for r, c in deps.cosines(run.query_vec, list(by_row)).items() if r in by_row}
    return standout_scores(cosines)


def clause_shares(cand, run) -> bool | None:
    """Whether an identity memory shares a word with the prompt's asking clause (the overlap filter's reading); None
    when the prompt's question about the user is the whole prompt, or there is none, or it is a follow-up."""
    from whisper.facts import named_facts, question_facts
    from whisper.stages.retrieve import user_question
    from whisper.stages.scoring import _space_words, candidate_words
    from whisper.text import topic_tokens

    if run.follow_up:
        return None
    clause = user_question(run.prompt)
    if clause is None or clause.strip() == run.prompt.strip():
        return None
    current = [run.request.space] if run.request.space else []
    exclude = current + ([cand.space] if cand.space else [])
    labels = (cand.title, *(cand.hit.tags if cand.hit is not None else ()))
    text = " ".join((cand.content, *labels))
    wanted = topic_tokens(clause, exclude=current) - _space_words(" ".join(exclude))
    facts = question_facts(clause)
    return bool(wanted & candidate_words(text, tuple(exclude))) or bool(facts & named_facts(cand.content, labels))


def install(variant: str, z: float | None = None) -> None:
    """Put the variant in place of today's identity gate, in this process, right after the benches' Django setup
    (whisper's services cannot be imported before it)."""
    if variant == "today":
        return
    if variant == "setz" and z is None:
        raise ValueError("setz needs --z")
    import bench.whisper_quality as quality
    import bench.whisper_stores as stores

    real_setup = quality.setup_django

    def setup_django(*args, **kwargs):
        real_setup(*args, **kwargs)
        _install_now(variant, z)

    quality.setup_django = stores.setup_django = setup_django


def _install_now(variant: str, z: float | None) -> None:
    import whisper.services.respond as respond
    import whisper.stages.gate as gate

    real_run_stages, real_threshold = respond.run_stages, gate.threshold_for

    def run_stages(run, conf, deps, *rest):
        _CURRENT.update(deps=deps, run=id(run), scores=None)
        return real_run_stages(run, conf, deps, *rest)

    def threshold_for(cand, run, conf):
        threshold = real_threshold(cand, run, conf)
        if not gate.identity_route(cand, run):
            return threshold
        if variant == "setz":
            if _CURRENT.get("scores") is None or _CURRENT.get("run") != id(run):
                _CURRENT.update(run=id(run), scores=set_scores(run, _CURRENT.get("deps")))
            score = _CURRENT["scores"].get(cand.node_id)
            return math.inf if score is not None and score < z else threshold
        if cand.overlap and clause_shares(cand, run) is False:
            return conf.identity_gate_no_word
        return threshold

    respond.run_stages, gate.threshold_for = run_stages, threshold_for


def plain(stores: list[str]) -> None:
    """The stores' `about_self` memories become ordinary memories in this process (bench.datasets.loader)."""
    import bench.datasets.loader as loader
    from bench.prompt_groups import STORE_OF_KEY

    unknown = set(stores) - set(loader.STORES)
    if unknown:
        raise ValueError(f"unknown store(s) {sorted(unknown)} (known: {', '.join(loader.STORES)})")
    real = loader.merged_memories

    def merged_memories(names=loader.STORES):
        memories, edges = real(names)
        return tuple({**m, "about_self": False} if STORE_OF_KEY.get(m["key"][0]) in stores else m
                     for m in memories), edges

    loader.merged_memories = merged_memories


def without_held_out() -> None:
    """Leave the held-out batches' prompts (bench.whisper_gate_fit.FRESH_BATCHES) out of this process's runs: a
    full dev run here is dev 1-17; batch 18 dev is run on its own, once per candidate (`--batch 18`)."""
    from dataclasses import replace

    import bench.datasets.loader as loader
    from bench.whisper_gate_fit import FRESH_BATCHES

    real_load = loader.load_whisper

    def load_whisper():
        scenarios = real_load()
        return replace(scenarios, prompts=tuple(p for p in scenarios.prompts if p.get("batch", 1) not in FRESH_BATCHES))

    loader.load_whisper = load_whisper


def route_precision(records: list[dict]) -> tuple[int, int]:
    """(right, passed) of the memories the identity route injected (with or without a shared word)."""
    right = passed = 0
    for r in records:
        rows = {row["key"]: row for row in (r["gate"] or {}).get("rows", []) if row["passed"]}
        for key in r["injected"]:
            if rows.get(key, {}).get("route", "").startswith("identity"):
                passed += 1
                right += key in r["good"]
    return right, passed


def routes(variant: str, z: float | None, stores: list[str], skip: list[str], out: Path | None) -> list[str]:
    """Dev 1-17's prompts (minus those touching `skip`) through the route recorder, the variant installed and the
    `stores`' identity memories plain; the identity route's right / passed."""
    plain(stores)
    install(variant, z)
    from bench.whisper_identity import _dev_prompts
    from bench.whisper_null import touches
    from bench.whisper_quality import setup_django  # after install: the variant goes in right after this setup
    from bench.whisper_routes import run_split
    from bench.whisper_stores import EMBEDDER, seed_stores

    wanted = {p["id"] for p in _dev_prompts() if not any(touches(p, s) for s in skip)}
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-ident17-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        from whisper.selectors import identity_hits

        size = len(identity_hits(now=scenarios.now))
        prompts = [p for p in scenarios.prompts_in("dev") if p["id"] in wanted]
        records = run_split(prompts, ids, scenarios.now)
    if out is not None:
        out.write_text(json.dumps(records))
    right, passed = route_precision(records)
    return [f"{variant}{'' if z is None else f' z {z}'}, plain {','.join(stores) or '-'}: identity set {size}, "
            f"{len(records)} prompts, identity route {right}/{passed} right"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("show", "routes"))
    parser.add_argument("variant", choices=VARIANTS)
    parser.add_argument("--z", type=float, help="setz: the standard score an identity-route memory needs")
    parser.add_argument("--batch", type=int, help="show: only this batch")
    parser.add_argument("--plain", nargs="*", default=[], help="routes: stores whose about_self memories go plain")
    parser.add_argument("--skip", nargs="*", default=[], help="routes: leave out the prompts touching these stores")
    parser.add_argument("--json", type=Path, help="routes: write every prompt's record here")
    args = parser.parse_args(argv)
    if args.what == "routes":
        print("\n".join(routes(args.variant, args.z, args.plain, args.skip, args.json)))
        return 0
    from bench.whisper_ret import count_cpu, cpu_line

    install(args.variant, args.z)
    if args.batch is None:
        without_held_out()
    spent = count_cpu()
    from bench.whisper_stores import main as stores_main

    code = stores_main(["--split", "dev", "--show", *(["--batch", str(args.batch)] if args.batch else [])])
    print(cpu_line(spent), file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
