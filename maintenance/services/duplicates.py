"""duplicate_merger: clear duplicates merge now (undoable), likely ones become merge proposals (reference §6.3)."""

from __future__ import annotations

import logging

from maintenance.detectors import duplicates as dup
from maintenance.detectors.conflicts import distinct_items
from maintenance.detectors.facts import Pair
from maintenance.detectors.similarity import nearest
from maintenance.llm.judges import judge_duplicates
from maintenance.registry import maintenance_job
from maintenance.selectors import facts_all, pending_proposal_uids, vector_table
from maintenance.services.context import RunContext, work_begin, work_finish
from maintenance.services.pairs import llm_verdicts, pair_chunks
from maintenance.services.proposals import propose, proposals_expire_stale
from memory.errors import OrmahError
from memory.services import node_merge

logger = logging.getLogger(__name__)


@maintenance_job("duplicate_merger", every_minutes=1440, cycle=30, uses_llm=True,
                 description="Merge clear duplicates (undoable); propose likely ones")
def duplicates_run(ctx: RunContext) -> None:
    """Examine new and changed nodes against their nearest same-type neighbours."""
    facts = facts_all()
    work = work_begin(ctx.job, facts.values())
    ctx.counts["candidates"] = len(work.candidates)
    min_cos = dup.CANDIDATE_MIN_COS if ctx.llm else dup.LIKELY_MIN_COS
    neighbours = nearest(vector_table(), [f.row_id for f in work.candidates], k=dup.NEIGHBOURS, min_cos=min_cos)
    seen: set[str] = set()
    gone: set[str] = set()
    stale = proposals_expire_stale(now=ctx.now)  # their memories changed: the pairs may be proposed afresh
    if stale:
        ctx.counts["stale_expired"] = stale
    pending = pending_proposal_uids("merge")
    for chunk, pairs in pair_chunks(ctx, work, facts, neighbours, seen=seen, gone=gone):
        min_composite = dup.CANDIDATE_MIN_COMPOSITE if ctx.llm else dup.LIKELY_MIN_COMPOSITE
        scored = dup.duplicate_candidates(pairs, min_cos=min_cos, min_composite=min_composite)
        judged = [(p, sc) for p, sc in scored if not distinct_items(p)]  # dated entries of one event: both true
        if len(judged) < len(scored):
            ctx.counts["distinct"] += len(scored) - len(judged)
        scored = judged
        ctx.counts["pairs"] += len(scored)
        verdicts = llm_verdicts(ctx, judge_duplicates, [p for p, _ in scored])
        if verdicts is None:
            continue
        undecided = set()
        for i, (pair, score) in enumerate(scored):
            if pair.a.uid in gone or pair.b.uid in gone:
                continue
            if pair.a.uid in pending or pair.b.uid in pending:
                ctx.counts["already_proposed"] += 1
                undecided.add(pair.a.uid)  # examined again once that proposal is decided or expires
                continue
            if (ctx.llm and i not in verdicts) or ctx.out_of_time():  # the bound is checked before every write
                undecided.add(pair.a.uid)
                continue
            _decide(ctx, pair, score, verdicts.get(i), gone, pending)
        work.done.extend(f for f in chunk if f.uid not in undecided)
    work_finish(work)


def _decide(ctx: RunContext, pair: Pair, score: dup.DuplicateScore, verdict, gone: set[str], pending: set[str]) -> None:
    auto = ctx.conf.auto_merge_threshold
    if verdict is not None:
        if not verdict.is_duplicate:
            ctx.counts["not_duplicate"] += 1
            return
        clear = score.composite >= auto and not (dup.protected(pair.a) or dup.protected(pair.b))
        title, content, why = verdict.merged_title, verdict.merged_content, verdict.reason
    else:
        call = dup.heuristic_verdict(pair, score, auto_threshold=auto)
        if call is None:
            return
        clear, title, content, why = call == "clear", None, None, ""
    draft = dup.merge_draft(pair, score, merged_title=title, merged_content=content, why=why)
    if clear:
        try:
            node_merge(keep_ref=draft.payload["keep_id"], discard_ref=draft.payload["discard_id"],
                       merged_title=title, merged_content=content, reason=draft.reason,
                       detail={"job": ctx.job, "score": score.composite}, now=ctx.now)
        except OrmahError as exc:
            logger.info("Merge of %s skipped: %s", pair.key, exc)
            ctx.counts["skipped"] += 1
            return
        gone.add(draft.payload["discard_id"])
        ctx.counts["merged"] += 1
        return
    if propose(ctx, draft):
        pending.update(draft.node_uids)
