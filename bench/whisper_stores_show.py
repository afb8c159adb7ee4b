"""What bench.whisper_stores prints: every prompt's outcome (`--show`), the ledger's candidates of every wrong prompt
(`--explain`), a split's figures, and the docs block (`render`). Split out of bench/whisper_stores.py, same output
byte for byte."""

from __future__ import annotations

from bench.datasets.loader import STORES
from bench.whisper_quality import Outcome, score

SECTION = "### Whisper on the labelled stores"


def gate_route(threshold: float | None, conf) -> str:
    """The gate route(s) a ledger row's threshold belongs to (the ledger keeps the threshold, not the route): the
    logistic gate, the standout, the identity, preference and follow-up cosine routes, the strong-cosine floor.
    Routes that share a value are all named ("identity-no-word/preference/follow-up" at 0.35 by default)."""
    if threshold is None:
        return "-"
    routes = (("logistic", conf.gate_logit), ("standout", conf.standout_z), ("identity", conf.identity_gate),
              ("identity-no-word", conf.identity_gate_no_word), ("follow-up", conf.follow_up_cosine),
              ("cosine", conf.overlap_cosine_floor))
    return "/".join(name for name, value in routes if abs(value - threshold) < 1e-9) or "?"


def explain(outcome: Outcome, ids: dict[str, str]) -> str:
    """The ledger's candidates of a prompt: stage, retrieval score, cosine, gate score and threshold, gate route."""
    from whisper.conf import get_conf as whisper_conf
    from whisper.models import WhisperCandidateRow, WhisperDecisionRow

    keys, conf = {v: k for k, v in ids.items()}, whisper_conf()
    p = outcome.prompt
    good = set(p.get("expect", [])) | set(p.get("accept", []))
    row = WhisperDecisionRow.objects.filter(session_id=f"bench-{p['id']}").order_by("-id").first()
    lines = [f"{p['id']} [{p['category']}] {p['prompt'][:70]!r} -> {outcome.decision} {outcome.injected} "
             f"expect {p.get('expect', [])}"]
    for c in WhisperCandidateRow.objects.filter(decision=row).order_by("id") if row else ():
        key = keys.get(c.node_uid, c.node_uid)
        mark = "+" if key in p.get("expect", []) else ("~" if key in good else "-")
        lines.append(f"    {mark} {key:5} {c.stage:16} score {c.retrieval_score} cos {c.raw_cosine} "
                     f"gate {c.gate_score}/{c.gate_threshold} {gate_route(c.gate_threshold, conf)} {c.title[:40]!r}")
    return "\n".join(lines)


def print_outcomes(split: str, outcomes: list[Outcome], ids: dict[str, str], *, show: bool,
                   explain_wrong: bool) -> None:
    """Every prompt's outcome (`show`), then the candidates of every wrong prompt (`explain_wrong`)."""
    if show:
        for o in outcomes:
            p = o.prompt
            print(f"{split} {p['id']:5} {p['kind']:6} {o.decision:22} {o.injected} expect={p.get('expect', [])}")
    if explain_wrong:
        wrong = set(score(outcomes).failures)
        for o in outcomes:
            if any(f.startswith(f"{o.prompt['id']} ") for f in wrong):
                print(explain(o, ids))


def print_metrics(split: str, metrics: dict) -> None:
    print(f"{split}: " + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in metrics.items()))


def render(results: dict[str, dict], categories: dict[str, dict], gate_note: str) -> str:
    total = sum(m["prompts"] for m in results.values())
    lines = [SECTION, "",
             f"`python -m bench.whisper_stores --write-docs`: the {total} scenarios of `bench/datasets/whisper.json`",
             f"over the {', '.join(STORES[:-1])} and {STORES[-1]} stores in one home (real services, real MiniLM vectors), at",
             f"the scenarios' clock. {gate_note}", "",
             "| split | prompts | hit rate (target ≥ 0.85) | precision (≥ 0.9) | silence (≥ 0.95) | p50 / p95 ms |",
             "|---|---|---|---|---|---|"]
    for split, m in results.items():
        lines.append(f"| {split} | {m['prompts']} ({m['inject']} inject, {m['silent']} silent) "
                     f"| {m['hit_rate']:.3f} ({m['hits']}/{m['inject']}) "
                     f"| {m['precision']:.3f} ({m['correct']}/{m['injected']}) "
                     f"| {m['silence']:.3f} ({m['silent_ok']}/{m['silent']}) | {m['p50']:.0f} / {m['p95']:.0f} |")
    cats = sorted({c for table in categories.values() for c in table})
    splits = list(categories)
    lines += ["", "Prompts fully right per category:", "",
              "| category | " + " | ".join(splits) + " |", "|---|" + "---|" * len(splits)]
    for c in cats:
        cells = [f"{categories[s][c][0]}/{categories[s][c][1]}" if c in categories[s] else "-" for s in splits]
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
