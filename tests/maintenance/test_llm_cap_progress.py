"""A pair job whose chunk needs more LLM calls than a run may make still moves on: the verdicts the run's calls got
are used and only the pairs left without one wait for the next run. Before, a spent call cap threw the chunk's
verdicts away, so with a cap smaller than one chunk's calls (ORMAH_LLM_PAIRS_PER_CALL=1 for a small local model,
or a low ORMAH_LLM_MAX_CALLS_PER_RUN) every run paid its calls for the same chunk and no run ever finished it."""

from __future__ import annotations

import pytest

from maintenance.runner import job_execute
from memory.models import EdgeRow
from tests.maintenance.conftest import pair_blocks

TOPICS = ["the SQLite index of the markdown files", "the Grafana dashboards of the billing service",
          "the nightly backup of the team server", "the release checklist for version two"]


def _answer(kind, user):
    if kind == "links":
        return {"results": [{"pair": n, "relationship": "supports", "reason": "r"} for n in pair_blocks(user)]}
    if kind == "duplicates":
        return {"results": [{"pair": n, "is_duplicate": False, "reason": "r"} for n in pair_blocks(user)]}
    return {"results": [{"pair": n, "same_subject": True, "conflict": False, "type": "none"} for n in pair_blocks(user)]}


@pytest.mark.parametrize("job", ["auto_linker", "duplicate_merger", "conflict_detector"])
def test_runs_with_a_small_call_cap_finish_the_work(llm, remember, settings, job):
    for topic in TOPICS:  # 12 memories: one chunk whose pairs need more calls than the cap
        for text in (f"We decided {topic}.", f"We decided on {topic}", f"Note: we decided {topic}, finally"):
            remember(text, type="fact")
    llm.answer = _answer
    settings.ORMAH = {**settings.ORMAH, "LLM_MAX_CALLS_PER_RUN": 2, "LLM_PAIRS_PER_CALL": 1}
    first = job_execute(job)
    assert (first.status, first.counts["llm_calls"]) == ("partial", 2)
    runs = [first] + [job_execute(job) for _ in range(40)]
    assert runs[-1].counts == {"candidates": 0, "llm_calls": 0}  # every memory examined in the end
    asked = sum(run.counts.get("llm_calls", 0) for run in runs)
    assert asked <= 2 * 12  # each pair asked about once (12 memories, at most 2 calls a run)
    if job == "auto_linker":
        assert EdgeRow.objects.count() == 12
