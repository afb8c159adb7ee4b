"""Spreading activation, one hop (reference §1.7): the top hits pass relevance to their graph neighbours.

Better than the original: a neighbour must pass the same filters as a direct hit (type, tier, space, tags,
dates) and must not be outdated unless history was asked for; the self node is never surfaced this way (it
`defines` every identity memory, so it would ride along with all of them); `contradicts` neighbours come back
with source "conflict", never as support.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from django.db import connection

from memory.domain import scoring
from memory.domain.enums import EdgeType
from memory.domain.scoring import RecallConf
from memory.search.filters import Filters, matching_ids
from memory.search.hybrid import Scored


def spread_activation(
    seeds: Sequence[Scored], *, exclude: Collection[int], filters: Filters, conf: RecallConf = RecallConf(),
) -> list[Scored]:
    """Neighbours of the top seeds (best per seed, best over seeds), scored seed * weight * factor * decay."""
    seeds = list(seeds)[: conf.activation_seeds]
    if not seeds:
        return []
    seed_ids = [s.row_id for s in seeds]
    edges = _edges(seed_ids)
    skip = set(exclude) | set(seed_ids)
    reachable = {t if s in seed_ids else s for s, t, _, _ in edges} - skip
    if not reachable:
        return []
    allowed = set(matching_ids(filters, row_ids=sorted(reachable), skip_self=True))
    best: dict[int, Scored] = {}
    for seed in seeds:
        offers: dict[int, Scored] = {}
        for source, target, edge_type, weight in edges:
            if seed.row_id not in (source, target):
                continue
            other = target if source == seed.row_id else source
            if other not in allowed:
                continue
            score = scoring.activation_score(seed.score, weight, edge_type, decay=conf.activation_decay)
            if other in offers and offers[other].score >= score:
                continue
            conflict = edge_type == EdgeType.CONTRADICTS
            offers[other] = Scored(
                row_id=other, score=round(score, 6), source="conflict" if conflict else "activated",
                legs=("activation",), activated_by=seed.row_id, activation_edge=edge_type,
            )
        ranked = sorted(offers.values(), key=lambda c: (-c.score, c.row_id))[: conf.activation_per_seed]
        for cand in ranked:
            if cand.row_id not in best or best[cand.row_id].score < cand.score:
                best[cand.row_id] = cand
    return sorted(best.values(), key=lambda c: (-c.score, c.row_id))


def _edges(row_ids: list[int]) -> list[tuple[int, int, str, float]]:
    """(source, target, type, weight) of the edges touching the rows: the query the ORM built, without its cost of
    building it on every recall (the same rows in the same order)."""
    marks = ", ".join(["%s"] * len(row_ids))
    with connection.cursor() as cur:
        cur.execute("SELECT source_id, target_id, edge_type, weight FROM memory_edgerow "
                    f"WHERE (source_id IN ({marks}) OR target_id IN ({marks}))", [*row_ids, *row_ids])
        return cur.fetchall()
