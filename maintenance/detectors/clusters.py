"""Consolidation clusters (reference §6.5) and the auto-cluster space vote (§6.6)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence

from maintenance.detectors.facts import NodeFacts, ProposalDraft, ProposalKind, basis_of
from maintenance.detectors.payloads import ConsolidationPayload

CLUSTER_MIN_COS = 0.6
CLUSTER_MAX_SIZE = 5
CLUSTER_MIN_SIZE = 2
MAX_CLUSTERS = 10
MAX_PROMPT_CHARS = 24_000
NEIGHBOURS = 20
CONSOLIDATED_TAG = "consolidated"
TYPE_PRIORITY = ("decision", "procedure", "observation", "concept", "fact")


def clusterable(node: NodeFacts) -> bool:
    """Working-tier memories that are not the self node, identity, or a consolidation themselves."""
    return node.tier == "working" and not node.is_self and not node.identity and CONSOLIDATED_TAG not in node.tags


def consolidation_clusters(
    seeds: Sequence[NodeFacts], neighbours: Callable[[NodeFacts], list[tuple[NodeFacts, float]]], *,
    taken: set[str], max_clusters: int = MAX_CLUSTERS, max_chars: int = MAX_PROMPT_CHARS,
) -> list[list[NodeFacts]]:
    """Greedy clusters: a seed plus up to four unclustered neighbours at cosine ≥ 0.6, within `max_chars` of text."""
    clusters: list[list[NodeFacts]] = []
    taken = set(taken)
    for seed in seeds:
        if len(clusters) >= max_clusters:
            break
        if seed.uid in taken or not clusterable(seed):
            continue
        cluster, size = [seed], len(seed.content)
        for other, cos in neighbours(seed):
            if len(cluster) >= CLUSTER_MAX_SIZE:
                break
            if cos < CLUSTER_MIN_COS or other.uid in taken or not clusterable(other) or other in cluster:
                continue
            if size + len(other.content) > max_chars:
                continue
            cluster.append(other)
            size += len(other.content)
        if len(cluster) >= CLUSTER_MIN_SIZE:
            clusters.append(cluster)
            taken.update(n.uid for n in cluster)
    return clusters


def majority_type(cluster: Sequence[NodeFacts]) -> str:
    """The consolidation's type: the highest in decision > procedure > observation > concept > fact present."""
    present = {n.type for n in cluster}
    return next((t for t in TYPE_PRIORITY if t in present), "concept")


def lossless_digest(cluster: Sequence[NodeFacts]) -> tuple[str, str]:
    """(title, content) without an LLM: every source's full text, one section each, nothing cut."""
    title = f"Consolidated: {cluster[0].label}"[:300]
    parts = [f"## {n.label}\n\n{n.content}" for n in cluster]
    return title, "\n\n".join(parts)


def consolidation_draft(cluster: Sequence[NodeFacts], *, title: str, content: str, type_: str,
                        why: str = "") -> ProposalDraft:
    return ProposalDraft(
        kind=ProposalKind.CONSOLIDATION, node_uids=tuple(n.uid for n in cluster),
        action=f"Consolidate {len(cluster)} working memories into one {type_} and archive them",
        reason=why or "Similar working memories (cosine ≥ 0.6)", score=round(0.5 + 0.1 * len(cluster), 2),
        payload=ConsolidationPayload(node_ids=[n.uid for n in cluster], title=title, content=content,
                                     type=type_).as_json(),
        basis=basis_of(*cluster),
    )


def space_vote(spaces: Iterable[str | None]) -> str | None:
    """The most common non-empty space among neighbours, or None when there is none or two spaces tie for it.

    A tie has no majority: guessing would hand the memory to whichever neighbour the index lists first (an order
    that a rewrite of unrelated rows changes), so it stays spaceless until a later neighbour breaks the tie.
    """
    ranked = Counter(s for s in spaces if s).most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
