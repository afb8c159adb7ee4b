"""Where whisper loses its weakest categories' prompts (session 25, para3, issue 11): paraphrase, follow_up and
identity prompts on the dev batches (1-15 in session 25), each not fully right placed at the stage that lost it.

    python -m bench.whisper_para table ROUTES [--rows] [--categories paraphrase,follow_up,identity]
    python -m bench.whisper_para follow-up-gate DUMP
    python -m bench.whisper_para follow-up-overlap DUMP
    python -m bench.whisper_para follow-up-route DUMP


ROUTES is the --json output of bench.whisper_routes (dev). A prompt is fully right when it gets an expected memory
and nothing outside expect + accept. A prompt not fully right is placed by its best-placed expected memory (the one
that got furthest): never among the candidates (recall's top k and the identity set did not hold it), dropped
before the gate (the floor, the identity space, the overlap filter), below the gate, passed the gate and dropped
after (the focus stage, already served, the cap), or injected with a wrong memory beside it. A prompt that ended
before retrieval (an early exit, conversational) has no pool. The held-out batches (whisper_gate_fit.FRESH_BATCHES)
are left out: their failures are not read.

`follow-up-gate` (candidate E): a gate dump of main's whisper (`bench.whisper_stores --split dev --gate-dump DUMP`)
replayed with today's weights (bench.whisper_gate_fit.replay, history served first), the logistic gate's hits of a
follow-up call (stage 2's `run.follow_up`, dumped per hit) at a threshold of FOLLOW_UP_GRID, every other hit at
today's; each batch and each store scored at the value best on the others (ties to today's).

`follow-up-overlap` (candidate F): the same dump replayed at today's gate with the overlap filter open on the
follow-up calls only (their recall hits the filter dropped face the gate, answer evidence 0 as dumped), against it
closed everywhere: the prompts made and broken, the net by batch and by store.

`follow-up-route` (candidates G, G2): the same dump replayed at today's gate with the follow-up route taken without
a served memory among the hits, at each threshold of ROUTE_GRID; the threshold chosen leave-one-batch-out and
leave-one-store-out against today's route (the served condition, 0.35).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from bench.whisper_gate_fit import FRESH_BATCHES as HELD_OUT

CATEGORIES = ("paraphrase", "follow_up", "identity")
BEFORE_GATE = ("below_floor", "below_post_rerank_floor", "identity_space", "no_overlap")
AFTER_GATE = ("off_focus", "already_served", "cap", "budget", "exploration")
# The furthest a memory can get, best last: where a prompt is placed is its expected memory's furthest stage.
ORDER = ("no pool", "not a candidate", "before the gate", "below the gate", "after the gate", "injected")


def fully_right(record: dict) -> bool:
    injected = set(record["injected"])
    if record["kind"] != "inject":
        return not injected
    # A memory the history already served counts for the hit (bench.whisper_stores.run_one).
    got = injected | set(record.get("served", ()))
    return bool(got & set(record["expect"])) and injected <= set(record["good"])


def place(stage: str | None) -> str:
    if stage is None:
        return "not a candidate"
    if stage in BEFORE_GATE:
        return "before the gate"
    if stage == "below_gate":
        return "below the gate"
    if stage in AFTER_GATE:
        return "after the gate"
    if stage == "injected":
        return "injected"
    return "before the gate" if stage == "candidate" else stage


def loss(record: dict) -> tuple[str, str | None]:
    """(where, the expected memory's stage detail) for a prompt not fully right."""
    view = (record["gate"] or {}).get("identity")
    if not view:
        return "no pool", None
    pool = view.get("pool", {})
    best, detail = "not a candidate", None
    for key in record["expect"]:
        entry = pool.get(key)
        where = place(entry[0] if entry else None)
        if ORDER.index(where) > ORDER.index(best):
            best, detail = where, (entry[0] if entry else None)
    if best == "injected":
        return "hit, a wrong memory beside it", None
    wrong = [k for k in record["injected"] if k not in record["good"]]
    return best + (" (a wrong memory injected)" if wrong else " (silent)"), detail


def table(records: list[dict], categories: tuple[str, ...], rows: bool) -> list[str]:
    records = [r for r in records if r["batch"] not in HELD_OUT and r.get("category") in categories]
    counts: dict[tuple[str, str], int] = defaultdict(int)
    details: Counter = Counter()
    right = Counter()
    total = Counter()
    out_rows = []
    for r in records:
        total[r["category"]] += 1
        if fully_right(r):
            right[r["category"]] += 1
            continue
        where, detail = loss(r)
        counts[where, r["category"]] += 1
        counts[where, "all"] += 1
        if detail:
            details[where.split(" (")[0], detail, r["category"]] += 1
        if rows:
            out_rows.append(f"{r['category']:10} b{r['batch']:<2} {r['id']:7} {where:40} {detail or '':14} "
                            f"exp {','.join(r['expect'])} inj {','.join(r['injected'])} {r['prompt'][:70]!r}")
    cols = categories + ("all",)
    lines = ["| where the prompt is lost | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for where in sorted({w for w, _ in counts}, key=lambda w: -counts[w, "all"]):
        lines.append(f"| {where} | " + " | ".join(str(counts[where, c]) for c in cols) + " |")
    lines.append("| fully right | " + " | ".join(str(right[c]) for c in categories) + f" | {sum(right.values())} |")
    lines.append("| prompts | " + " | ".join(str(total[c]) for c in categories) + f" | {sum(total.values())} |")
    lines.append("")
    lines += [f"  {w}: stage {d} ({c}) {n}" for (w, d, c), n in sorted(details.items())]
    return lines + ([""] + sorted(out_rows) if rows else [])


FOLLOW_UP_GRID = (-0.40, -0.60, -0.80, -1.00, -1.20, -1.40)


def follow_up_sweep(dump: list[dict]) -> dict[float, list[bool]]:
    """Per threshold of the follow-up calls' logistic hits, every dumped prompt fully right or not."""
    import numpy as np

    from bench.whisper_gate_fit import rows
    from bench.whisper_identity import fully_right as replayed_right
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    x, _, where = rows(dump)
    w = np.array(GATE_WEIGHTS[1:])
    base = {k: float(GATE_WEIGHTS[0] + x[j] @ w) for j, k in enumerate(where)}
    marked = {(pi, ci, k) for (pi, ci, k) in where if dump[pi]["calls"][ci][k].get("follow_up")}
    return {t: replayed_right(dump, {k: v + (GATE_LOGIT - t if k in marked else 0.0) for k, v in base.items()},
                              GATE_LOGIT) for t in FOLLOW_UP_GRID}


def left_out(dump: list[dict], by_t: dict[float, list[bool]], by: str) -> tuple[int, list[str]]:
    """Each group scored at the value with the most prompts fully right on the other groups (ties to today's)."""
    from bench.prompt_groups import group_of
    from whisper.conf import GATE_LOGIT

    groups = [str(group_of(item["prompt"], by)) for item in dump]
    total, per = 0, []
    for g in sorted(set(groups), key=lambda g: (len(g), g)):
        def right(t, inside):
            return sum(ok for ok, gg in zip(by_t[t], groups) if (gg == g) == inside)
        chosen = max(FOLLOW_UP_GRID, key=lambda t: (right(t, False), -abs(t - GATE_LOGIT)))
        total += right(chosen, True)
        per.append(f"{g}: {chosen:+.2f} {right(chosen, True)} against {right(GATE_LOGIT, True)}")
    return total, per


def follow_up_gate(path: Path) -> list[str]:
    from bench.whisper_gate_fit import prepared
    from whisper.conf import GATE_LOGIT

    dump = prepared(json.loads(path.read_text()), open_overlap=False)
    by_t = follow_up_sweep(dump)
    today = sum(by_t[GATE_LOGIT])
    lines = [f"{len(dump)} prompts; in sample: " + ", ".join(f"{t:+.2f} {sum(v)}" for t, v in by_t.items())]
    for by in ("batch", "store"):
        total, per = left_out(dump, by_t, by)
        lines.append(f"left out by {by}: {total} against {today} (net {total - today:+d})")
        lines += ["  " + x for x in per]
    return lines


def follow_up_overlap(path: Path) -> list[str]:
    import numpy as np

    from bench.prompt_groups import group_of
    from bench.whisper_gate_fit import FRESH_BATCHES, gate_inputs, rows
    from bench.whisper_identity import fully_right as replayed_right
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    def right(open_follow_up: bool) -> tuple[list[dict], list[bool]]:
        dump = [item for item in json.loads(path.read_text()) if item["prompt"].get("batch", 1) not in FRESH_BATCHES]
        for item in dump:
            for i, call in enumerate(item["calls"]):
                if call is None:
                    continue
                opened = open_follow_up and any(c.get("follow_up") for c in call)
                for c in call:
                    if c["route"] == "no_overlap" and opened:
                        c["route"] = "logistic"
                item["calls"][i] = call = [c for c in call if c["route"] != "no_overlap"] or None
                if call:
                    gate_inputs(call)
        x, _, where = rows(dump)
        w = np.array(GATE_WEIGHTS[1:])
        logits = {k: float(GATE_WEIGHTS[0] + x[j] @ w) for j, k in enumerate(where)}
        return dump, replayed_right(dump, logits, GATE_LOGIT)

    dump, before = right(False)
    _, after = right(True)
    made = [d["prompt"]["id"] for d, a, b in zip(dump, before, after) if b and not a]
    broken = [d["prompt"]["id"] for d, a, b in zip(dump, before, after) if a and not b]
    net: Counter = Counter()
    for d, a, b in zip(dump, before, after):
        if a != b:
            for by in ("batch", "store"):
                net[by, str(group_of(d["prompt"], by))] += 1 if b else -1
    lines = [f"{sum(before)} -> {sum(after)} of {len(dump)}; made {len(made)} ({', '.join(made)}), broken "
             f"{len(broken)} ({', '.join(broken)})"]
    for by in ("batch", "store"):
        lines.append(f"by {by}: " + ", ".join(f"{g} {n:+d}" for (b, g), n in sorted(net.items()) if b == by))
    return lines


ROUTE_GRID = (0.20, 0.25, 0.30, 0.35)


def _route_without_served(threshold: float):
    """bench.whisper_gate_fit._follow_up_answer without its served-memory condition, at `threshold`."""
    from whisper.asked import asks

    def answer(call: list[dict], prompt: str) -> int | None:
        hits = [(k, c) for k, c in enumerate(call) if c["route"] in ("logistic", "served") and c.get("follow_up")]
        fresh = [(k, c) for k, c in hits if not c.get("served") and c.get("cos_alone") is not None]
        if not fresh or not asks(prompt):
            return None

        def both(c: dict) -> float:
            return min(c["cos_alone"], c["cos_joined"]) * c.get("space_factor", 1.0)

        k, c = max(fresh, key=lambda kc: both(kc[1]))
        return k if both(c) >= threshold else None
    return answer


def follow_up_route(path: Path) -> list[str]:
    import numpy as np

    import bench.whisper_gate_fit as gf
    from bench.prompt_groups import group_of
    from bench.whisper_identity import fully_right as replayed_right
    from whisper.conf import GATE_LOGIT, GATE_WEIGHTS

    dump = gf.prepared(json.loads(path.read_text()), open_overlap=False)
    x, _, where = gf.rows(dump)
    w = np.array(GATE_WEIGHTS[1:])
    logits = {k: float(GATE_WEIGHTS[0] + x[j] @ w) for j, k in enumerate(where)}
    runs = {"today": replayed_right(dump, logits, GATE_LOGIT)}
    real = gf._follow_up_answer
    try:
        for t in ROUTE_GRID:
            gf._follow_up_answer = _route_without_served(t)
            runs[f"{t:.2f}"] = replayed_right(dump, logits, GATE_LOGIT)
    finally:
        gf._follow_up_answer = real
    lines = [f"{len(dump)} prompts; in sample: " + ", ".join(f"{k} {sum(v)}" for k, v in runs.items())]
    for by in ("batch", "store"):
        groups = [str(group_of(item["prompt"], by)) for item in dump]
        total, per = 0, []
        for g in sorted(set(groups), key=lambda g: (len(g), g)):
            def right(name, inside):
                return sum(ok for ok, gg in zip(runs[name], groups) if (gg == g) == inside)
            chosen = max(runs, key=lambda name: right(name, False))  # ties to today's (first)
            total += right(chosen, True)
            per.append(f"{g}: {chosen} {right(chosen, True)} against {right('today', True)}")
        lines.append(f"left out by {by}: {total} against {sum(runs['today'])} "
                     f"(net {total - sum(runs['today']):+d})")
        lines += ["  " + x for x in per]
    for name, v in runs.items():
        if name != "today":
            made = [d["prompt"]["id"] for d, a, b in zip(dump, runs["today"], v) if b and not a]
            broken = [d["prompt"]["id"] for d, a, b in zip(dump, runs["today"], v) if a and not b]
            lines.append(f"{name}: made {len(made)} ({', '.join(made)}), broken {len(broken)} ({', '.join(broken)})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("what", choices=("table", "follow-up-gate", "follow-up-overlap",
                                                   "follow-up-route"))
    parser.add_argument("routes", type=Path, help="table: the --json output of bench.whisper_routes (dev); "
                                                   "follow-up-gate: a --gate-dump of bench.whisper_stores (dev)")
    parser.add_argument("--rows", action="store_true", help="also one line per prompt not fully right")
    parser.add_argument("--categories", default=",".join(CATEGORIES))
    args = parser.parse_args(argv)
    if args.what != "table":
        run = {"follow-up-gate": follow_up_gate, "follow-up-overlap": follow_up_overlap,
               "follow-up-route": follow_up_route}[args.what]
        print("\n".join(run(args.routes)))
        return 0
    records = json.loads(args.routes.read_text())
    print("\n".join(table(records, tuple(args.categories.split(",")), args.rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
