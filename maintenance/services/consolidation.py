"""consolidator: clusters of similar working memories become one node from their FULL content (reference §6.5).

With an LLM the synthesis is written at once (sources move to archival, linked derived_from). Without one each
cluster becomes a consolidation proposal whose draft is a lossless digest of the sources, and the two-phase agent
protocol offers the same clusters to the calling agent to synthesise.
"""

from __future__ import annotations

import logging

from maintenance.detectors import clusters as cl
from maintenance.detectors.similarity import nearest
from maintenance.errors import LLMBudgetExhausted, LLMUnavailable
from maintenance.llm.judges import consolidate
from maintenance.registry import maintenance_job
from maintenance.selectors import facts_all, pending_proposal_uids, vector_table
from maintenance.services.context import RunContext, work_begin, work_finish
from maintenance.services.proposals import propose
from memory.domain.enums import NodeType
from memory.errors import OrmahError
from memory.services import nodes_consolidate

logger = logging.getLogger(__name__)
NODE_TYPES = frozenset(t.value for t in NodeType)


def clusters_for(facts: dict, seeds: list, *, taken: set[str], max_clusters: int) -> list[list]:
    """Consolidation clusters seeded by `seeds`, over clusterable working memories."""
    allowed = {f.row_id for f in facts.values() if cl.clusterable(f)}
    neighbours = nearest(vector_table(), [f.row_id for f in seeds], k=cl.NEIGHBOURS, min_cos=cl.CLUSTER_MIN_COS,
                         allowed=allowed)
    return cl.consolidation_clusters(
        seeds, lambda seed: [(facts[r], cos) for r, cos in neighbours.get(seed.row_id, []) if r in facts],
        taken=taken, max_clusters=max_clusters)


@maintenance_job("consolidator", every_minutes=1440, cycle=70, uses_llm=True,
                 description="Synthesise clusters of working memories into one")
def consolidation_run(ctx: RunContext) -> None:
    """Cluster around new and changed working memories, at most ten clusters a run."""
    facts = facts_all()
    work = work_begin(ctx.job, facts.values(), keep=cl.clusterable)
    ctx.counts["candidates"] = len(work.candidates)
    clusters = clusters_for(facts, work.candidates, taken=pending_proposal_uids("consolidation"),
                            max_clusters=cl.MAX_CLUSTERS)
    if len(clusters) >= cl.MAX_CLUSTERS:
        ctx.stop()  # more seeds may remain: the next run continues from them
    failed: set[str] = set()
    for cluster in clusters:
        if ctx.out_of_time():
            failed.update(n.uid for n in cluster)
            continue
        if ctx.llm is None:
            title, content = cl.lossless_digest(cluster)
            draft = cl.consolidation_draft(cluster, title=title, content=content, type_=cl.majority_type(cluster))
            propose(ctx, draft)
            continue
        try:
            answer = consolidate(ctx.llm, cluster)
            type_ = answer.type.strip().lower()
            type_ = type_ if type_ in NODE_TYPES else cl.majority_type(cluster)
            nodes_consolidate(source_refs=[n.uid for n in cluster], title=answer.title, content=answer.summary,
                              type=NodeType(type_), reason="consolidator (LLM)", now=ctx.now)
            ctx.counts["consolidated"] += 1
        except LLMBudgetExhausted:
            ctx.stop()
            failed.update(n.uid for n in cluster)
        except (LLMUnavailable, OrmahError) as exc:
            logger.info("Consolidation of %s skipped: %s", [n.uid[:8] for n in cluster], exc)
            ctx.counts["skipped"] += 1
            ctx.stop()
            failed.update(n.uid for n in cluster)
    if len(clusters) < cl.MAX_CLUSTERS:
        work.done = [f for f in work.candidates if f.uid not in failed]
    else:
        work.done = [f for f in work.candidates if f.uid in {n.uid for c in clusters for n in c} - failed]
    work_finish(work)
