"""Conflict detection (reference §6.4): belief pairs, cheap change signals, and the edges a verdict implies.

Evolution (the common case) is stored `evolved_from` newer → older, tension `contradicts` a → b, both at
weight 0.9. Without an LLM a similar belief pair (cosine ≥ 0.60) becomes a *proposal* only when a cheap signal
says the statements differ: changed numbers or dates or a change phrase (→ evolution), or a negation on one side
only (→ tension).
"""

from __future__ import annotations

from collections.abc import Iterable

from maintenance.detectors.facts import EdgeDraft, NodeFacts, Pair, ProposalDraft, ProposalKind, basis_of
from maintenance.detectors.text import dates, has_change_phrase, negated, numbers

BELIEF_TYPES = frozenset({"preference", "fact", "observation", "goal"})
CONFLICT_WEIGHT = 0.9
CANDIDATE_MIN_COS = 0.40
HEURISTIC_MIN_COS = 0.60
NEIGHBOURS = 15
CONFLICT_EDGES = frozenset({"contradicts", "evolved_from"})


def spaces_compatible(a: NodeFacts, b: NodeFacts) -> bool:
    """Same space, or one of them global: memories of two different projects never conflict."""
    return a.space == b.space or a.space is None or b.space is None


def conflict_candidates(pairs: Iterable[Pair], *, linked: set[str], min_cos: float = CANDIDATE_MIN_COS) -> list[Pair]:
    """Belief pairs in compatible spaces, similar enough, not already joined by a conflict edge (`linked` keys)."""
    return [p for p in pairs
            if p.cosine >= min_cos and p.a.type in BELIEF_TYPES and p.b.type in BELIEF_TYPES
            and not (p.a.is_self or p.b.is_self) and spaces_compatible(p.a, p.b) and p.key not in linked]


def change_signals(a: NodeFacts, b: NodeFacts) -> dict[str, bool]:
    """Which cheap signals say the two statements differ."""
    ta, tb = f"{a.title} {a.content}", f"{b.title} {b.content}"
    na, nb, da, db = numbers(ta), numbers(tb), dates(ta), dates(tb)
    return {
        "numbers": bool(na and nb and na != nb),
        "dates": bool(da and db and da != db),
        "negation": negated(ta) != negated(tb),
        "change": has_change_phrase(ta) != has_change_phrase(tb),
    }


def newer_older(a: NodeFacts, b: NodeFacts) -> tuple[NodeFacts, NodeFacts]:
    return (a, b) if (a.created, a.uid) >= (b.created, b.uid) else (b, a)


def evolution_edge(newer: NodeFacts, older: NodeFacts, reason: str) -> EdgeDraft:
    return EdgeDraft(newer.uid, older.uid, "evolved_from", CONFLICT_WEIGHT, reason)


def heuristic_conflict(pair: Pair) -> ProposalDraft | None:
    """Without an LLM: a conflict proposal when a cheap signal fires on a similar pair, else None."""
    if pair.cosine < HEURISTIC_MIN_COS:
        return None
    signals = change_signals(pair.a, pair.b)
    fired = sorted(k for k, v in signals.items() if v)
    if not fired:
        return None
    newer, older = newer_older(pair.a, pair.b)
    if signals["numbers"] or signals["dates"] or signals["change"]:
        edge = evolution_edge(newer, older, f"Changed {', '.join(fired)}")
        action = "Record that the newer memory supersedes the older one (evolved_from)"
    else:
        edge = EdgeDraft(newer.uid, older.uid, "contradicts", CONFLICT_WEIGHT, "One states the negation of the other")
        action = "Record that the two memories contradict each other (contradicts)"
    return ProposalDraft(
        kind=ProposalKind.CONFLICT, node_uids=(newer.uid, older.uid), action=action,
        reason=f"Similar beliefs (cosine {pair.cosine:.2f}) with {', '.join(fired)} differing",
        score=round(pair.cosine, 4),
        payload={"source_id": edge.source_uid, "target_id": edge.target_uid, "edge": edge.edge,
                 "weight": edge.weight, "edge_reason": edge.reason, "signals": fired},
        basis=basis_of(newer, older),
    )


def verdict_edge(pair: Pair, *, same_subject: bool, conflict: bool, kind: str, evolved_node: str | None,
                 explanation: str) -> EdgeDraft | None:
    """The edge an LLM verdict implies: evolution newer → older, tension a → b; None unless a real conflict."""
    if not (same_subject and conflict) or kind not in ("evolution", "tension"):
        return None
    if kind == "tension":
        return EdgeDraft(pair.a.uid, pair.b.uid, "contradicts", CONFLICT_WEIGHT, explanation)
    if evolved_node in ("a", "b"):
        newer = pair.a if evolved_node == "a" else pair.b
        older = pair.b if newer is pair.a else pair.a
    else:
        newer, older = newer_older(pair.a, pair.b)
    return evolution_edge(newer, older, explanation)
