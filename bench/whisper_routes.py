"""Whisper's gate routes on the labelled stores: which route let each injected memory through, right and wrong per
route and labelling batch, and what each cosine route would pass at other thresholds (session 15, issue 11).

    python -m bench.whisper_routes [--split dev] [--batch N] [--json FILE] [--losses]

Runs the split as bench.whisper_stores does (real services, the scenarios' clock, history first) and reads each
candidate's route where the gate decides it: the logistic gate, the identity route (with or without a shared word),
the preference route (the same), the follow-up route, the convention standout, or the strong cosine of an identity
memory recall did not return. A memory the gate passed that also stands out is counted on the gate's route (session
24; before, on the standout's: its ledger row shows the standout score either way). Batches 1-4 were tuned on; 5 and 6 are the freshest, so a route whose precision there
is far below its older batches' is overfitted. The sweeps count candidates at the gate (before the focus stage,
already served and the cap). Tune on dev only. The held-out batches (whisper_gate_fit.FRESH_BATCHES) have their own column
in the route table and are left out of everything else.

`--losses` (session 20): for every should-inject prompt whose expected memory is one the self node defines (the
identity set), where the identity and preference routes lose it, by category: the route not taken (neither an
identity question about the user nor a preference task with a preference expected), not among the candidates,
taken off the route by the focus rule, dropped before the gate, below the route's cosine gate, over it but under
the best route memory's share, dropped after the gate, or found with a wrong memory beside it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import defaultdict
from contextlib import contextmanager
from pathlib import Path

# Batches held out of every fit (bench.whisper_gate_fit.FRESH_BATCHES, issue 11): their own column in the route
# table, never in its sums, the sweeps or the list of wrong injections (rules are not designed from their rows).
from bench.whisper_gate_fit import FRESH_BATCHES as HELD_OUT

FRESH = (5, 6)
GRID = (0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50)
STANDOUT_GRID = ((4.5, 0.25), (5.0, 0.25), (5.6, 0.25), (6.0, 0.25), (6.5, 0.25), (7.0, 0.25))
COSINE_ROUTES = ("identity", "identity-no-word", "preference", "preference-no-word")


def route_name(pre: dict, standout: bool, follow_up: bool) -> str:
    """The route of one candidate from what the gate knew of it before deciding (pre: preference, identity,
    logistic, shared word) and whether the standout or the follow-up route set its gate afterwards."""
    word = "" if pre.get("overlap") else "-no-word"
    if standout:
        return "standout"
    if pre.get("preference"):
        return "preference" + word
    if pre.get("identity"):
        return "identity" + word
    if pre.get("logistic"):
        return "follow-up" if follow_up else "logistic"
    return "cosine"


@contextmanager
def recording_routes(keys: dict[str, str]):
    """Record, per whisper_respond call, every candidate the gate judged (key, route, gate score and threshold,
    passed or not, the follow-up route's two cosines) and the standout scores of the identity set (both views)."""
    import whisper.conventions as conventions
    import whisper.pipeline as pipeline
    import whisper.services.respond as respond
    from whisper.asked import asks
    from whisper.stages import gate

    calls: list[dict | None] = []
    views: list[dict] = []
    real_passing = conventions.passing
    real_standout_gate = gate.standout_gate
    gated: set[int] = set()  # the candidates the gate itself passed, before the standouts join (session 24)

    def standout_gate(run, conf):
        gated.clear()
        gated.update(id(c) for c in run.pool)
        return real_standout_gate(run, conf)

    def passing(cosines, **limits):
        scores = conventions.standout_scores(cosines, min_set=limits.get("min_set", 8))
        views.append({keys.get(k, k): [round(s, 4), round(cosines[k], 4)] for k, s in scores.items()})
        return real_passing(cosines, **limits)

    def observed(run, conf, deps):
        logistic = {id(c) for c in gate.logistic_hits(run)}
        pre = {id(c): {"preference": False, "identity": gate.identity_route(c, run),
                       "logistic": id(c) in logistic, "overlap": bool(c.overlap)} for c in run.pool}
        follow = {}
        if (run.follow_up and run.prompt_vec is not None and run.query_vec is not None and run.request.session_id
                and asks(run.prompt)):
            hits = [c for c in run.pool if id(c) in logistic and c.hit is not None]
            served = deps.served()
            fresh = [c for c in hits if c.node_id not in served]
            if fresh and len(fresh) != len(hits):
                rows = [c.hit.row_id for c in fresh]
                alone, joined = deps.cosines(run.prompt_vec, rows), deps.cosines(run.query_vec, rows)
                follow = {id(c): round(min(alone.get(c.hit.row_id, 0.0), joined.get(c.hit.row_id, 0.0))
                                       * c.space_factor, 4) for c in fresh}
        gated.clear()
        decision = gate.injection_gate(run, conf, deps)
        kept = {id(c) for c in run.pool}
        rows = []
        for c in run.candidates:
            if id(c) not in pre and c.node_id not in run.standouts:
                continue
            # A memory the gate passed keeps its route when it also stands out (the ledger shows its standout).
            standout = (c.node_id in run.standouts and c.gate_threshold == conf.standout_z
                        and id(c) not in gated)
            follow_up = id(c) in follow and c.gate_threshold == conf.follow_up_cosine
            rows.append({"key": keys.get(c.node_id, c.node_id), "gate": c.gate_score, "threshold": c.gate_threshold,
                         "route": route_name(pre.get(id(c), {}), standout, follow_up),
                         "passed": id(c) in kept, "follow_up": follow.get(id(c))})
        calls[-1] = {"rows": rows, "standout": list(views)}
        return decision

    stages = tuple(observed if s is gate.injection_gate else s for s in pipeline.STAGES)
    original = respond.run_stages

    def run_stages(run, conf, deps, _stages=stages):
        calls.append(None)
        views.clear()
        decision = original(run, conf, deps, _stages)
        calls[-1] = (calls[-1] or {"rows": [], "standout": []}) | {"identity": identity_view(run, deps, keys)}
        return decision

    respond.run_stages, conventions.passing, gate.standout_gate = run_stages, passing, standout_gate
    try:
        yield calls
    finally:
        respond.run_stages, conventions.passing, gate.standout_gate = original, real_passing, real_standout_gate


def identity_view(run, deps, keys: dict[str, str]) -> dict | None:
    """What the identity and preference routes had in one call, after every stage: whether each route was taken,
    the identity set ranked by cosine to the query ([key, type, cosine]) and, for its members among the candidates,
    [stage, still on the identity route, gate score, gate threshold]."""
    from whisper.classifier import IDENTITY
    from whisper.stages.gate import identity_route

    if run.query_vec is None:
        return None
    members = deps.identity()
    found = deps.cosines(run.query_vec, [h.row_id for h in members])
    ranked = sorted(([keys.get(h.node_id, h.node_id), str(h.type), round(found.get(h.row_id, 0.0), 4)]
                     for h in members), key=lambda m: -m[2])
    question = run.identity_question or (run.intent is not None and run.intent.has(IDENTITY))
    inset = {m[0] for m in ranked}
    cands = {}
    for c in run.candidates:
        key = keys.get(c.node_id, c.node_id)
        if key in inset and key not in cands:
            cands[key] = [c.stage, c.identity, c.gate_score, c.gate_threshold]
    # Every candidate of the call (session 23, bench.whisper_identity): [stage, on the identity route, gate score,
    # gate threshold, source], the first of a memory's candidates.
    pool = {}
    for c in run.candidates:
        pool.setdefault(keys.get(c.node_id, c.node_id),
                        [c.stage, identity_route(c, run), c.gate_score, c.gate_threshold, c.source])
    return {"identity_route": bool(run.about_user and question), "preference_route": False,  # gone in session 22
            "set": ranked, "candidates": cands, "pool": pool}


def run_split(prompts, ids: dict[str, str], now) -> list[dict]:
    """Each prompt's outcome and what its own call's gate saw (history calls left out)."""
    from bench.whisper_stores import run_one

    keys = {v: k for k, v in ids.items()}
    out = []
    with recording_routes(keys) as calls:
        for p in prompts:
            calls.clear()
            o = run_one(p, ids, now=now)
            out.append({"id": p["id"], "batch": p.get("batch", 1), "kind": p["kind"], "prompt": p["prompt"],
                        "category": p.get("category"), "expect": sorted(p.get("expect", [])),
                        "good": sorted(set(p.get("expect", [])) | set(p.get("accept", []))),
                        "injected": o.injected, "served": o.served_before,
                        "gate": calls[-1] if calls else None})
    return out


def _rows(record: dict) -> list[dict]:
    return (record["gate"] or {}).get("rows", [])


def _cell(right: int, total: int) -> str:
    return f"{right}/{total}" + (f" ({right / total:.2f})" if total else "")


def route_table(records: list[dict]) -> list[str]:
    """Markdown rows: per route, right/injected per batch, on batches 1-4, on the fresh batches and overall."""
    counts: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in records:
        routes = {row["key"]: row["route"] for row in _rows(r) if row["passed"]}
        for key in r["injected"]:
            cell = counts[routes.get(key, "?"), r["batch"]]
            cell[0] += key in r["good"]
            cell[1] += 1
    batches = sorted({b for _, b in counts})
    lines = ["| route | " + " | ".join(f"batch {b}" for b in batches) + " | 1-4 | fresh 5-6 | all but held out |",
             "|---|" + "---|" * (len(batches) + 3)]
    for route in sorted({r for r, _ in counts}):
        old, fresh = [0, 0], [0, 0]
        for b in batches:
            if b in HELD_OUT:
                continue
            acc = fresh if b in FRESH else old
            acc[0] += counts[route, b][0]
            acc[1] += counts[route, b][1]
        cells = [f"{counts[route, b][0]}/{counts[route, b][1]}" if counts[route, b][1] else "-" for b in batches]
        lines.append(f"| {route} | " + " | ".join(cells) + f" | {_cell(*old)} | {_cell(*fresh)} | "
                     f"{_cell(old[0] + fresh[0], old[1] + fresh[1])} |")
    return lines


def wrong_injections(records: list[dict]) -> list[str]:
    out = []
    for r in records:
        if r["batch"] in HELD_OUT:
            continue
        rows = {row["key"]: row for row in _rows(r) if row["passed"]}
        for key in r["injected"]:
            if key not in r["good"]:
                row = rows.get(key, {})
                out.append(f"{row.get('route', '?'):18} batch {r['batch']} {r['id']:6} {key:5} "
                           f"gate {row.get('gate')}/{row.get('threshold')} {r['prompt'][:60]!r}")
    return sorted(out)


BEFORE_GATE = ("below_floor", "identity_space", "no_overlap")
LOSS_CATEGORIES = ("identity", "personal", "paraphrase", "follow_up")


def loss_cause(record: dict) -> str | None:
    """Where the routes lose a should-inject prompt's expected identity-set memory (its best-placed one by cosine),
    or "right" / "hit, wrong beside"; None when the prompt expects no identity-set memory or is not an inject."""
    view = (record["gate"] or {}).get("identity")
    if record["kind"] != "inject" or not view:
        return None
    order = [m[0] for m in view["set"]]
    expected = [k for k in order if k in record.get("expect", ())]
    if not expected:
        return None
    hit = bool(set(record["expect"]) & set(record["injected"]))
    wrong = any(k not in record["good"] for k in record["injected"])
    if hit:
        return "hit, wrong beside" if wrong else "right"
    key = expected[0]
    kind = dict((m[0], m[1]) for m in view["set"])[key]
    if not (view["identity_route"] or (view["preference_route"] and kind.endswith("preference"))):
        cause = "route not taken"
    elif key not in view["candidates"]:
        cause = "not among the candidates"
    else:
        stage, on_route, score, threshold = view["candidates"][key]
        if not on_route:
            cause = f"off the route (focus rule), then {stage}"
        elif stage in BEFORE_GATE:
            cause = f"dropped before the gate ({stage})"
        elif stage == "below_gate":
            below = score is not None and threshold is not None and score < threshold
            cause = "below the route gate" if below else "over the route gate, under the best's share"
        else:
            cause = f"passed the gate, dropped at {stage}"
    return cause + (" (a wrong memory injected)" if wrong else "")


def loss_table(records: list[dict]) -> list[str]:
    """Markdown rows: prompts per cause (loss_cause) and category, the held-out batches left out."""
    counts: dict[tuple[str, str], int] = defaultdict(int)
    for r in records:
        cause = None if r["batch"] in HELD_OUT else loss_cause(r)
        if cause is not None:
            category = r.get("category") if r.get("category") in LOSS_CATEGORIES else "other"
            counts[cause, category] += 1
            counts[cause, "all"] += 1
    columns = LOSS_CATEGORIES + ("other", "all")
    lines = ["| where the expected identity-set memory is lost | " + " | ".join(columns) + " |",
             "|---|" + "---:|" * len(columns)]
    for cause in sorted({c for c, _ in counts}, key=lambda c: -counts[c, "all"]):
        lines.append(f"| {cause} | " + " | ".join(str(counts[cause, col]) for col in columns) + " |")
    return lines


def _sweep_line(label: str, items: list[tuple[int, bool]]) -> str:
    old = [sum(ok for b, ok in items if b not in FRESH), sum(1 for b, _ in items if b not in FRESH)]
    fresh = [sum(ok for b, ok in items if b in FRESH), sum(1 for b, _ in items if b in FRESH)]
    return f"  {label}: right/passed batches 1-4 {old[0]}/{old[1]}, fresh {fresh[0]}/{fresh[1]}"


def sweeps(records: list[dict]) -> list[str]:
    """What each cosine route, the follow-up route and the standout would pass at other thresholds, candidates at
    the gate counted right or wrong by the labels (before the focus stage, already served and the cap); the held-out
    batches left out."""
    records = [r for r in records if r["batch"] not in HELD_OUT]
    lines = []
    for route in COSINE_ROUTES:
        lines.append(f"{route}:")
        for t in GRID:
            lines.append(_sweep_line(f"{t:.2f}", [(r["batch"], row["key"] in r["good"]) for r in records
                                                  for row in _rows(r) if row["route"] == route and row["gate"] >= t]))
    lines.append("follow-up (the best not-yet-served hit the logistic gate did not pass):")
    best = []
    for r in records:
        rows = [row for row in _rows(r) if row["follow_up"] is not None]
        if rows:
            top = max(rows, key=lambda row: row["follow_up"])
            if top["route"] == "follow-up" or not top["passed"]:
                best.append((r["batch"], top["follow_up"], top["key"] in r["good"]))
    for t in GRID:
        lines.append(_sweep_line(f"{t:.2f}", [(b, ok) for b, v, ok in best if v >= t]))
    lines.append("standout (z, raw cosine):")
    for z, cos in STANDOUT_GRID:
        items = []
        for r in records:
            found = {k for view in (r["gate"] or {}).get("standout", []) for k, (s, c) in view.items()
                     if s >= z and c >= cos}
            items += [(r["batch"], k in r["good"]) for k in found]
        lines.append(_sweep_line(f"z {z} cosine {cos}", items))
    return lines


def main(argv: list[str] | None = None) -> int:
    from bench.whisper_quality import setup_django
    from bench.whisper_stores import EMBEDDER, seed_stores

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--batch", type=int, help="only the prompts of this labelling round")
    parser.add_argument("--json", type=Path, help="also write every prompt's record here")
    parser.add_argument("--losses", action="store_true",
                        help="also print where the identity and preference routes lose their expected memories")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORMAH_EMBEDDER", EMBEDDER)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-routes-") as tmp:
        setup_django(Path(tmp))
        ids, scenarios = seed_stores()
        prompts = [p for p in scenarios.prompts_in(args.split) if args.batch in (None, p.get("batch", 1))]
        records = run_split(prompts, ids, scenarios.now)
    if args.json:
        args.json.write_text(json.dumps(records))
    print("\n".join(route_table(records) + ["", "wrong injections:"] + wrong_injections(records) + [""]
                    + sweeps(records) + (["", *loss_table(records)] if args.losses else [])))
    print("load " + " ".join(open("/proc/loadavg").read().split()[:3]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
