"""What the pair jobs (duplicate_merger, auto_linker, conflict_detector) share: their candidates a chunk at a time
with each chunk's new pairs, the LLM's verdicts on a chunk's pairs, and the edge writes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import TypeVar

from maintenance.detectors.facts import EdgeDraft, NodeFacts, Pair
from maintenance.errors import LLMBudgetExhausted, LLMUnavailable
from maintenance.services.context import RunContext, Work
from memory.domain.enums import EdgeType
from memory.errors import OrmahError
from memory.services import EdgeSpec, audit_note_many, edge_create, edges_create

CHUNK = 16  # candidates a pair job takes between two checks of its time bound (and per round of LLM calls)
V = TypeVar("V")


def pair_chunks(
    ctx: RunContext, work: Work, facts: dict[int, NodeFacts], neighbours: dict[int, list[tuple[int, float]]], *,
    seen: set[str], gone: set[str],
) -> Iterator[tuple[list[NodeFacts], list[Pair]]]:
    """The work's candidates CHUNK at a time, each chunk with its new pairs (`pairs_by_node`, flattened), until the
    run is out of time or its LLM budget is spent (`llm_verdicts`)."""
    for start in range(0, len(work.candidates), CHUNK):
        if ctx.llm_spent or ctx.out_of_time():
            break
        chunk = work.candidates[start:start + CHUNK]
        by_node = pairs_by_node(chunk, facts, neighbours, seen=seen, gone=gone)
        yield chunk, [p for ps in by_node.values() for p in ps]


def llm_verdicts(ctx: RunContext, judge: Callable[..., dict[int, V]], pairs: Sequence[Pair]) -> dict[int, V] | None:
    """`judge`'s verdicts on `pairs` by position ({} without an LLM or without pairs), `pairs_per_call` pairs a call.
    A failed call is counted (`llm_failures`) and gives None: the chunk stays unfinished and the next chunk asks
    again. A spent budget (`ctx.llm_spent`: `pair_chunks` ends) keeps the verdicts of the calls made before it (None
    when there are none): a chunk that needs more calls than a run may make still moves on, its pairs without a
    verdict waiting for the next run (before, every run paid its calls for the same chunk and never finished it).
    When the calls left cannot cover every pair, the pairs are asked memory by memory. Either way (a failed call, a
    spent budget) the run is marked incomplete."""
    if not (ctx.llm and pairs):
        return {}
    per_call = ctx.conf.llm.pairs_per_call
    order = list(range(len(pairs)))
    if ctx.llm.calls + -(-len(pairs) // per_call) > ctx.conf.llm.max_calls_per_run:
        # Not every pair can be asked about this run: ask memory by memory (stable), so the verdicts got finish
        # whole memories (a memory is done only when each of its pairs has one) and the next run goes on from there.
        first: dict[str, int] = {}
        for pair in pairs:
            first.setdefault(pair.a.uid, len(first))
        order.sort(key=lambda i: first[pairs[i].a.uid])
    verdicts: dict[int, V] = {}
    for start in range(0, len(pairs), per_call):
        asked = order[start:start + per_call]
        try:
            got = judge(ctx.llm, [pairs[i] for i in asked], per_call=per_call)
        except LLMBudgetExhausted:
            ctx.llm_spent = True
            ctx.stop()
            return verdicts or None
        except LLMUnavailable:
            ctx.counts["llm_failures"] += 1
            ctx.stop()
            return None
        verdicts.update((asked[i], verdict) for i, verdict in got.items())
    return verdicts


def pairs_by_node(
    chunk: Sequence[NodeFacts], facts: dict[int, NodeFacts], neighbours: dict[int, list[tuple[int, float]]], *,
    seen: set[str], gone: set[str],
) -> dict[str, list[Pair]]:
    """Each node's pairs with its neighbours, skipping pairs already taken this run and nodes merged away."""
    out: dict[str, list[Pair]] = {}
    for node in chunk:
        if node.uid in gone:
            continue
        pairs = out.setdefault(node.uid, [])
        for row_id, cos in neighbours.get(node.row_id, []):
            other = facts.get(row_id)
            if other is None or other.uid in gone:
                continue
            pair = Pair(node, other, cos)
            if pair.key not in seen:
                seen.add(pair.key)
                pairs.append(pair)
    return out


def edge_apply(draft: EdgeDraft, *, job: str, now: datetime) -> None:
    """Write one edge into its source's file (through memory services) and note it in the audit log."""
    edge_create(source_ref=draft.source_uid, target_ref=draft.target_uid, edge=EdgeType(draft.edge),
                weight=round(draft.weight, 3), reason=draft.reason or None)
    audit_note_many(operation="connect", now=now, entries=[(draft.source_uid, {
        "target": draft.target_uid, "edge": draft.edge, "weight": round(draft.weight, 3), "job": job})])


def edges_apply(drafts: Sequence[EdgeDraft], *, job: str, now: datetime) -> list[OrmahError | None]:
    """`edge_apply` for a few edges in one hold of the write lock (memory.services.edges_create); per draft, in
    order, None when written or the error that skipped it."""
    results = edges_create(edges=[EdgeSpec(d.source_uid, d.target_uid, EdgeType(d.edge), round(d.weight, 3),
                                           d.reason or None) for d in drafts], per_hold=len(drafts))
    done = [(d.source_uid, {"target": d.target_uid, "edge": d.edge, "weight": round(d.weight, 3), "job": job})
            for d, r in zip(drafts, results) if not isinstance(r, OrmahError)]
    if done:
        audit_note_many(operation="connect", now=now, entries=done)
    return [r if isinstance(r, OrmahError) else None for r in results]
