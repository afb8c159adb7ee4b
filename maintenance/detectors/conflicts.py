"""Conflict detection (reference §6.4): belief pairs, cheap change signals, and the edges a verdict implies.

Evolution (the common case) is stored `evolved_from` newer → older, tension `contradicts` a → b, both at
weight 0.9. Without an LLM a similar belief pair (cosine ≥ 0.60) becomes a *proposal* only when a cheap signal
says the statements differ: changed numbers or dates or a change phrase (→ evolution), or a negation on one side
only (→ tension).
"""

from __future__ import annotations

from collections.abc import Iterable

from maintenance.detectors.compare import compare
from maintenance.detectors.facts import EdgeDraft, NodeFacts, Pair, ProposalDraft, ProposalKind, basis_of, group_of
from maintenance.detectors.payloads import EdgePayload
from maintenance.detectors.text import dates, has_change_phrase, negated, numbers

BELIEF_TYPES = frozenset({"preference", "fact", "observation", "goal"})
CONFLICT_WEIGHT = 0.9
CANDIDATE_MIN_COS = 0.40
HEURISTIC_MIN_COS = 0.60
NEIGHBOURS = 15
CONFLICT_EDGES = frozenset({"contradicts", "evolved_from"})
MARKER_MIN_SHARED = 0.3


def spaces_compatible(a: NodeFacts, b: NodeFacts) -> bool:
    """Same space, or one of them global: memories of two different projects never conflict."""
    return a.space == b.space or a.space is None or b.space is None


def conflict_candidates(pairs: Iterable[Pair], *, linked: set[str], min_cos: float = CANDIDATE_MIN_COS) -> list[Pair]:
    """Belief pairs in compatible spaces, similar enough, not already joined by a conflict edge (`linked` keys)."""
    return [p for p in pairs
            if p.cosine >= min_cos and p.a.type in BELIEF_TYPES and p.b.type in BELIEF_TYPES
            and not (p.a.is_self or p.b.is_self) and spaces_compatible(p.a, p.b) and p.key not in linked]


def distinct_items(pair: Pair) -> str:
    """Why the two are different things, or "": entries of a recurring event on different dates, different
    identifiers, differently numbered documents (maintenance/detectors/compare.py). Both are true: such a pair is
    neither a conflict nor a duplicate, so no detector sends it on, to the rules or to an LLM."""
    return compare(pair.a.title, pair.a.content, pair.b.title, pair.b.content).distinct


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
    """Without an LLM: a conflict proposal when the pair's difference says so (maintenance/detectors/compare.py).

    A changed value in the same sentence or a change marker on one side -> supersession (`evolved_from`
    newer -> older), unless both sides state the same values and neither says a thing ended (a restatement); an antonym, a one-sided negation or a reversed preference -> tension (`contradicts`).
    Entries of a recurring event, different identifiers and differently numbered documents are never conflicts.
    """
    if pair.cosine < HEURISTIC_MIN_COS:
        return None
    cmp = compare(pair.a.title, pair.a.content, pair.b.title, pair.b.content)
    if cmp.distinct:
        return None
    newer, older = newer_older(pair.a, pair.b)
    slot = cmp.slot
    if slot and (cmp.quantity_change or cmp.date_change):
        old, new = (slot[0], slot[1]) if older is pair.a else (slot[1], slot[0])
        signal, why = "value", f"The newer memory changes {' '.join(old)} to {' '.join(new)}"
    elif cmp.change_marker and cmp.shared >= MARKER_MIN_SHARED and not cmp.restated_values:
        signal, why = "change", "The newer memory says this changed"
    elif slot and cmp.antonym:
        signal, why = "antonym", f"One says {' '.join(slot[0])}, the other {' '.join(slot[1])}"
    elif cmp.negation_only:
        signal, why = "negation", "One states the negation of the other"
    elif cmp.reversed_order:
        signal, why = "reversed", "They state opposite preferences"
    else:
        return None
    if signal in ("value", "change"):
        edge = evolution_edge(newer, older, why)
        action = "Record that the newer memory supersedes the older one (evolved_from)"
    else:
        edge = EdgeDraft(newer.uid, older.uid, "contradicts", CONFLICT_WEIGHT, why)
        action = "Record that the two memories contradict each other (contradicts)"
    return ProposalDraft(
        kind=ProposalKind.CONFLICT, node_uids=(newer.uid, older.uid), action=action,
        reason=f"{why} (similarity {pair.cosine:.2f})", score=round(pair.cosine, 4),
        payload=EdgePayload(source_id=edge.source_uid, target_id=edge.target_uid, edge=edge.edge, weight=edge.weight,
                            edge_reason=edge.reason, signals=[signal]).as_json(),
        basis=basis_of(newer, older),
        group=conflict_group(signal, edge.edge, cmp.shape),
    )


def conflict_group(signal: str, edge: str, shape: str) -> tuple[str, str]:
    """Proposals of one cause: the same signal on the same template of sentence."""
    what = "A newer memory supersedes an older one" if edge == "evolved_from" else "Two memories contradict"
    return group_of(ProposalKind.CONFLICT, f"{signal}|{shape}", f"{what}: “{shape}”" if shape else what)


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
