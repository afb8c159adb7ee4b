"""conflict_detector: with an LLM, evolution/tension edges at weight 0.9; without, proposals from cheap signals."""

from __future__ import annotations

import logging

from maintenance.detectors import conflicts as cf
from maintenance.detectors.similarity import nearest
from maintenance.llm.judges import judge_conflicts
from maintenance.registry import maintenance_job
from maintenance.selectors import facts_all, linked_keys, vector_table
from maintenance.services.context import RunContext, work_begin, work_finish
from maintenance.services.pairs import edge_apply, llm_verdicts, pair_chunks
from maintenance.services.proposals import propose
from memory.errors import OrmahError

logger = logging.getLogger(__name__)


@maintenance_job("conflict_detector", every_minutes=1440, cycle=40, uses_llm=True,
                 description="Detect contradictions and evolutions between beliefs")
def conflicts_run(ctx: RunContext) -> None:
    """Check new and changed beliefs (every space, global × project included) against similar beliefs."""
    facts = facts_all()
    work = work_begin(ctx.job, facts.values(), keep=lambda f: f.type in cf.BELIEF_TYPES)
    ctx.counts["candidates"] = len(work.candidates)
    min_cos = cf.CANDIDATE_MIN_COS if ctx.llm else cf.HEURISTIC_MIN_COS
    beliefs = {f.row_id for f in facts.values() if f.type in cf.BELIEF_TYPES and not f.is_self}
    neighbours = nearest(vector_table(), [f.row_id for f in work.candidates], k=cf.NEIGHBOURS, min_cos=min_cos,
                         allowed=beliefs)
    linked = linked_keys(tuple(cf.CONFLICT_EDGES))
    seen: set[str] = set()
    for chunk, near in pair_chunks(ctx, work, facts, neighbours, seen=seen, gone=set()):
        pairs = cf.conflict_candidates(near, linked=linked, min_cos=min_cos)
        judged = [p for p in pairs if not cf.distinct_items(p)]  # recurring dated entries never reach the LLM
        if len(judged) < len(pairs):
            ctx.counts["distinct"] += len(pairs) - len(judged)
        pairs = judged
        ctx.counts["pairs"] += len(pairs)
        if not ctx.llm:
            for pair in pairs:
                draft = cf.heuristic_conflict(pair)
                if draft:
                    propose(ctx, draft)
            work.done.extend(chunk)
            continue
        verdicts = llm_verdicts(ctx, judge_conflicts, pairs)
        if verdicts is None:
            continue
        undecided = {p.a.uid for i, p in enumerate(pairs) if i not in verdicts}
        for i, verdict in verdicts.items():
            pair = pairs[i]
            if ctx.out_of_time():  # the bound is checked before every write; the rest waits for the next run
                undecided.add(pair.a.uid)
                continue
            edge = cf.verdict_edge(pair, same_subject=verdict.same_subject, conflict=verdict.conflict,
                                   kind=verdict.type, evolved_node=verdict.evolved_node,
                                   explanation=verdict.explanation or verdict.type)
            if edge is None:
                ctx.counts["no_conflict"] += 1
                continue
            try:
                edge_apply(edge, job=ctx.job, now=ctx.now)
            except OrmahError as exc:
                logger.info("Conflict edge %s skipped: %s", pair.key, exc)
                ctx.counts["skipped"] += 1
                continue
            linked.add(pair.key)
            ctx.counts[edge.edge] += 1
        work.done.extend(f for f in chunk if f.uid not in undecided)
    work_finish(work)
