"""The pair jobs' shared loop (maintenance.services.pairs): candidates a chunk at a time, and the LLM's verdicts on a
chunk with what a failed call or a spent budget does to the run."""

from __future__ import annotations

import time

import pytest

from maintenance.conf import get_conf
from maintenance.detectors.facts import Pair
from maintenance.llm import llm_for_run
from maintenance.llm.judges import judge_duplicates
from maintenance.selectors import facts_all
from maintenance.services.context import RunContext, Work
from maintenance.services.pairs import llm_verdicts, pair_chunks
from memory.domain.node import utcnow


@pytest.fixture
def two(remember):
    remember("Ormah uses SQLite as the index of its markdown files")
    remember("Ormah uses SQLite as the index for its markdown files.")
    return list(facts_all().values())


def _ctx(with_llm: bool) -> RunContext:
    conf = get_conf()
    deadline = time.monotonic() + 60
    return RunContext(job="duplicate_merger", conf=conf, now=utcnow(), deadline=deadline,
                      llm=llm_for_run(conf.llm, deadline=deadline) if with_llm else None)


def _chunk_sizes(ctx: RunContext, work: Work) -> list[int]:
    return [len(chunk) for chunk, _ in pair_chunks(ctx, work, {}, {}, seen=set(), gone=set())]


def test_candidates_come_sixteen_at_a_time_with_their_pairs(no_llm, two):
    ctx = _ctx(with_llm=False)
    assert _chunk_sizes(ctx, Work(job=ctx.job, candidates=two * 20, top=0)) == [16, 16, 8]
    facts = {f.row_id: f for f in two}
    chunks = list(pair_chunks(ctx, Work(job=ctx.job, candidates=two, top=0), facts,
                              {two[0].row_id: [(two[1].row_id, 0.97)]}, seen=set(), gone=set()))
    assert [(len(chunk), [p.key for p in pairs]) for chunk, pairs in chunks] == [(2, [Pair(two[0], two[1], 0.97).key])]


def test_without_an_llm_the_verdicts_are_empty_and_the_run_goes_on(no_llm, two):
    ctx = _ctx(with_llm=False)
    assert llm_verdicts(ctx, judge_duplicates, [Pair(two[0], two[1], 0.97)]) == {}
    assert (ctx.complete, ctx.llm_spent, dict(ctx.counts)) == (True, False, {})


def test_a_failed_llm_call_is_counted_and_the_next_chunk_asks_again(llm, two):
    llm.answer = lambda kind, user: (503, "{}")
    ctx = _ctx(with_llm=True)
    assert llm_verdicts(ctx, judge_duplicates, [Pair(two[0], two[1], 0.97)]) is None
    assert (ctx.complete, ctx.llm_spent, dict(ctx.counts)) == (False, False, {"llm_failures": 1})
    assert _chunk_sizes(ctx, Work(job=ctx.job, candidates=two * 10, top=0)) == [16, 4]


def test_a_spent_llm_budget_ends_the_chunks(llm, two, settings):
    settings.ORMAH = {**settings.ORMAH, "LLM_MAX_CALLS_PER_RUN": 0}
    ctx = _ctx(with_llm=True)
    assert llm_verdicts(ctx, judge_duplicates, [Pair(two[0], two[1], 0.97)]) is None
    assert (ctx.complete, ctx.llm_spent, dict(ctx.counts), len(llm.requests)) == (False, True, {}, 0)
    assert _chunk_sizes(ctx, Work(job=ctx.job, candidates=two * 10, top=0)) == []
