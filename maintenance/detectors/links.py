"""Link detection (reference §6.1/§6.2): neighbours above the auto-link line, with the cross-space penalty.

The penalised similarity is the cosine minus 0.1 when the spaces differ (global counts as its own space). Pairs
at or above 0.65 (penalised) become edges (typed by the LLM, `related_to` without one, the same rule `remember`
applies); cross-space pairs that miss the line only because of the penalty, with a raw cosine at least halfway
above it (≥ 0.70), become `link` proposals.
"""

from __future__ import annotations

from collections.abc import Iterable

from maintenance.detectors.facts import EdgeDraft, Pair, ProposalDraft, ProposalKind, basis_of, group_of
from maintenance.detectors.payloads import EdgePayload

NEIGHBOURS = 6
RELATIONSHIPS = ("supports", "part_of", "depends_on", "contradicts", "related_to")
ALIASES = {
    "support": "supports", "supported": "supports", "related": "related_to", "relevant": "related_to",
    "relates_to": "related_to", "dependency": "depends_on", "depends": "depends_on", "depend_on": "depends_on",
    "part": "part_of", "partof": "part_of", "contradiction": "contradicts", "contradict": "contradicts",
    "conflict": "contradicts", "no": "none", "unrelated": "none", "": "none",
}


def normalise_relationship(value: str | None) -> str:
    """One of RELATIONSHIPS or "none" (aliases such as "support" or "related" are mapped)."""
    key = (value or "").strip().lower().replace(" ", "_").replace("-", "_")
    key = ALIASES.get(key, key)
    return key if key in RELATIONSHIPS else "none"


def penalised(pair: Pair, penalty: float) -> float:
    return pair.cosine - (penalty if (pair.a.space or "") != (pair.b.space or "") else 0.0)


def link_candidates(pairs: Iterable[Pair], *, linked: set[str], threshold: float, penalty: float,
                    ) -> tuple[list[tuple[Pair, float]], list[tuple[Pair, float]]]:
    """(pairs to link, cross-space pairs to propose) with their penalised similarity; never the self node."""
    link, propose = [], []
    for pair in pairs:
        if pair.a.is_self or pair.b.is_self or pair.key in linked:
            continue
        sim = penalised(pair, penalty)
        if sim >= threshold:
            link.append((pair, round(sim, 3)))
        elif pair.cosine >= threshold + penalty / 2:
            propose.append((pair, round(sim, 3)))
    return link, propose


def related_edge(pair: Pair, sim: float) -> EdgeDraft:
    return EdgeDraft(pair.a.uid, pair.b.uid, "related_to", sim, f"auto-linked at {sim:.2f} similarity")


def link_draft(pair: Pair, sim: float) -> ProposalDraft:
    """A cross-space link offered for review; links between the same two spaces form one group."""
    spaces = {pair.a.space or "global", pair.b.space or "global"}
    return ProposalDraft(
        kind=ProposalKind.LINK, node_uids=(pair.a.uid, pair.b.uid),
        action=f"Link across spaces ({pair.a.space or 'global'} ↔ {pair.b.space or 'global'}) with related_to",
        reason=f"Cosine {pair.cosine:.2f}, {sim:.2f} after the cross-space penalty", score=round(pair.cosine, 4),
        payload=EdgePayload(source_id=pair.a.uid, target_id=pair.b.uid, edge="related_to", weight=max(sim, 0.0),
                            edge_reason=f"linked across spaces at {pair.cosine:.2f} similarity").as_json(),
        basis=basis_of(pair.a, pair.b),
        group=group_of(ProposalKind.LINK, "|".join(sorted(spaces)), "Links across spaces: " + " ↔ ".join(sorted(spaces))),
    )
