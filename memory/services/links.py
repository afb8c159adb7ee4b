"""Auto-links of new memories: the memories similar enough to link to, searched before the write lock (links_ahead)
and re-checked under it (_recheck), then chosen (_auto_links) for memory.services.nodes.create_in."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memory import index, runtime
from memory.conf import MemoryConf
from memory.domain.identity import is_self_node
from memory.domain.node import Node
from memory.domain.requests import NodeCreate, build_node
from memory.search import matrix
from memory.search.semantic import cosines_for, uses_matrix, vector_search_many
from memory.search.vectors import VectorHit
from memory.selectors import LinkTarget, link_targets
from memory.writes import WriteUnit

logger = logging.getLogger(__name__)
AUTO_LINK_CANDIDATES = 6
LINK_AHEAD_MARGIN = 8  # extra nearest rows found before the lock, so rows changed meanwhile rarely force a new search
RECHECK_MAX = 512  # more rows written since the search ahead than this (a job's batch): search again
EMBED_ONLY_ID = "00000000-0000-4000-8000-000000000000"  # the texts embedded ahead do not depend on the id


@dataclass(frozen=True)
class AutoLink:
    target_id: str
    title: str
    similarity: float


@dataclass(frozen=True)
class LinkAhead:
    """The auto-links' index search run before the write lock, for each request's own text in order: its nearest
    rows (at most `limit`) as the vector matrix held them at generation `gen` of the change log or later."""

    gen: int
    limit: int
    found: list[list[VectorHit]]


def _auto_links(nodes: Sequence[Node], unit: WriteUnit | None, ahead: LinkAhead | None = None, *,
                conf: MemoryConf | None = None) -> list[list[AutoLink]]:
    """For each node, the memories at or above the auto-link threshold (cosine, minus the cross-space penalty)
    among those indexed and the batch's earlier nodes: what remembering them one at a time would link.

    One embedding call for the batch's texts (through the cache) and one matrix product against the index, or,
    with `ahead` (that product run before the lock), only the cosines of the rows written since (_recheck).
    `unit=None` (with `conf`): a forecast before the lock (memory.services.nodes.nodes_prepare), which writes
    nothing (the vector table is matched to the model only under the lock).
    """
    if unit is not None:
        conf = unit.conf
        unit.match_vector_table()
    assert conf is not None
    emb = runtime.embedder(conf)
    vecs, _ = index.node_vectors(nodes, emb)
    own = [v[0] for v in vecs]
    found = _recheck(own, ahead) if ahead is not None else None
    if found is None:
        found = vector_search_many(own, AUTO_LINK_CANDIDATES + 1)
    rows = link_targets(row_ids={hit.row_id for hits in found for hit in hits})
    # best[j, i]: the best cosine of node i's own vector to any vector of node j (its own or a passage's)
    starts = np.cumsum([0] + [len(v) for v in vecs[:-1]])
    best = np.maximum.reduceat(np.concatenate(vecs) @ np.stack(own).T, starts, axis=0)
    out = []
    for i, node in enumerate(nodes):
        # (cosine, order, target) as a search of the index holding nodes[:i] would rank them; of the batch's
        # earlier nodes only the best AUTO_LINK_CANDIDATES + 1 can make the cut (a full pool is quadratic)
        pool: list[tuple[float, tuple[int, int], LinkTarget | Node | None]] = [
            (hit.cosine, (0, hit.row_id), rows.get(hit.row_id)) for hit in found[i]]
        earlier = np.lexsort((np.arange(i), -best[:i, i]))[:AUTO_LINK_CANDIDATES + 1].tolist()
        pool += [(float(best[j, i]), (1, j), nodes[j]) for j in earlier]
        pool.sort(key=lambda c: (-c[0], c[1]))
        out.append(_links_from(node, pool[:AUTO_LINK_CANDIDATES + 1], conf))
    return out


def links_ahead(*, requests: Sequence[NodeCreate], now: datetime) -> LinkAhead | None:
    """Run the auto-links' index search BEFORE the write lock (after nodes_embed_ahead: the vectors are waiting in
    the process): the unit then re-checks only the rows the change log shows written since (_recheck). None when
    there is nothing to search ahead (vec0 search, no vector table yet) or it failed: the unit searches itself."""
    if not requests or not uses_matrix():
        return None
    try:
        nodes = [build_node(r, node_id=EMBED_ONLY_ID, now=now) for r in requests]
        vecs, _ = index.node_vectors(nodes, runtime.embedder())
        gen = matrix.generation()  # read before the search: it sees at least every write logged up to gen
        limit = AUTO_LINK_CANDIDATES + 1 + LINK_AHEAD_MARGIN
        found = matrix.search_many([v[0] for v in vecs], limit)
    except Exception as exc:  # only a head start: the unit searches and reports the error itself
        logger.debug("the auto-link search ahead of the write lock failed (%s); the write searches",
                     type(exc).__name__)
        return None
    return None if found is None else LinkAhead(gen=gen, limit=limit, found=found)


def _recheck(own: Sequence[np.ndarray], ahead: LinkAhead) -> list[list[VectorHit]] | None:
    """The nearest AUTO_LINK_CANDIDATES + 1 rows of each vector now, from the search run ahead: its hits on rows
    the change log shows unchanged since its generation (their cosines cannot have moved), merged with the
    cosines of the rows written, changed or removed since (a memory another remember wrote meanwhile is found
    here). None (search again) when the log cannot say what changed, more than RECHECK_MAX rows changed, or a
    vector's unchanged hits no longer fill
    the cut while the search ahead may have left rows out."""
    if len(ahead.found) != len(own):
        return None
    changed = matrix.changed_since(ahead.gen)
    if changed is None or len(changed) > RECHECK_MAX:
        return None
    need = AUTO_LINK_CANDIDATES + 1
    ids = sorted(changed)
    out = []
    for vector, hits in zip(own, ahead.found):
        kept = [h for h in hits if h.row_id not in changed]
        if len(kept) < need and len(hits) >= ahead.limit:
            return None
        pool = kept + (cosines_for(vector, ids) if ids else [])
        pool.sort(key=lambda h: (-h.cosine, h.row_id))
        out.append(pool[:need])
    return out


def _links_from(node: Node, pool: list, conf: MemoryConf) -> list[AutoLink]:
    links = []
    linked = {c.target for c in node.connections}
    for cosine, _, target in pool:
        if target is None:
            continue
        if isinstance(target, LinkTarget):
            uid, is_self = target.uid, target.is_self
        else:
            uid, is_self = target.id, is_self_node(target)
        if is_self or uid in linked:
            continue
        sim = cosine - (conf.cross_space_penalty if (target.space or "") != (node.space or "") else 0.0)
        if sim >= conf.auto_link_threshold:
            links.append(AutoLink(target_id=uid, title=target.title or target.content[:60], similarity=round(sim, 3)))
    return links[:AUTO_LINK_CANDIDATES]
