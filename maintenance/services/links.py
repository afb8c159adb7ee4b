"""auto_linker: typed edges from the LLM (or related_to without one) for close pairs; cross-space pairs proposed."""

from __future__ import annotations

import logging

from maintenance.detectors import links as lk
from maintenance.detectors.facts import EdgeDraft, Pair
from maintenance.detectors.similarity import nearest
from maintenance.llm.judges import judge_links
from maintenance.registry import maintenance_job
from maintenance.selectors import facts_all, linked_keys, vector_table
from maintenance.services.context import RunContext, work_begin, work_finish
from maintenance.services.pairs import edges_apply, llm_verdicts, pair_chunks
from maintenance.services.proposals import propose
from memory.services.batches import PER_HOLD

logger = logging.getLogger(__name__)


@maintenance_job("auto_linker", every_minutes=1440, cycle=50, uses_llm=True,
                 description="Classify and create edges between close memories")
def links_run(ctx: RunContext) -> None:
    """Link new and changed nodes to their unlinked nearest neighbours, at most `max_edges_per_run` edges."""
    facts = facts_all()
    work = work_begin(ctx.job, facts.values())
    ctx.counts["candidates"] = len(work.candidates)
    threshold, penalty = ctx.conf.auto_link_threshold, ctx.conf.cross_space_penalty
    neighbours = nearest(vector_table(), [f.row_id for f in work.candidates], k=lk.NEIGHBOURS, min_cos=threshold)
    linked = linked_keys()
    seen: set[str] = set()
    for chunk, pairs in pair_chunks(ctx, work, facts, neighbours, seen=seen, gone=set()):
        if ctx.counts["edges"] >= ctx.conf.max_edges_per_run:
            ctx.stop()
            break
        link, cross = lk.link_candidates(pairs, linked=linked, threshold=threshold, penalty=penalty)
        for pair, sim in cross:
            propose(ctx, lk.link_draft(pair, sim))
        if ctx.out_of_time():
            break
        verdicts = llm_verdicts(ctx, judge_links, [p for p, _ in link])
        if verdicts is None:
            continue
        undecided = set()
        todo: list[tuple[Pair, EdgeDraft]] = []
        for i, (pair, sim) in enumerate(link):
            if ctx.llm and i not in verdicts:
                undecided.add(pair.a.uid)
                continue
            edge = lk.related_edge(pair, sim)
            if ctx.llm:
                kind = verdicts[i].relationship
                if kind == "none":
                    ctx.counts["none"] += 1
                    continue
                edge = EdgeDraft(pair.a.uid, pair.b.uid, kind, sim, verdicts[i].reason or f"{kind} (LLM)")
            todo.append((pair, edge))
        room = ctx.conf.max_edges_per_run - ctx.counts["edges"]
        if len(todo) > room:  # the cap holds within a chunk too; the rest waits for the next run
            undecided.update(pair.a.uid for pair, _ in todo[room:])
            todo = todo[:room]
            ctx.stop()
        for start in range(0, len(todo), PER_HOLD):
            batch = todo[start:start + PER_HOLD]
            if ctx.out_of_time():  # the bound is checked before every hold of the write lock
                undecided.update(pair.a.uid for pair, _ in todo[start:])
                break
            for (pair, _), error in zip(batch, edges_apply([e for _, e in batch], job=ctx.job, now=ctx.now)):
                if error is not None:
                    logger.info("Link %s skipped: %s", pair.key, error)
                    ctx.counts["skipped"] += 1
                    continue
                linked.add(pair.key)
                ctx.counts["edges"] += 1
        work.done.extend(f for f in chunk if f.uid not in undecided)
    work_finish(work)
