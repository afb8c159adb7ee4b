"""The recall latency bench's stage table times stages the pipeline really calls (issue 13).

The table once lost half its rows without a word: stages had been renamed or moved, and the bench skipped any
name a module no longer had. Now a missing name, or a stage its caller no longer looks up where the bench wraps
it, stops the bench; these tests run its stage pass on a small real store.
"""

from __future__ import annotations

import pytest

import bench.recall_stages as stages
from memory.domain.search import SearchQuery
from memory.services import edge_create


def _store(mem) -> None:
    first = mem("The billing service retries webhooks with jitter", title="Webhook retries", auto_link=False)
    second = mem("Billing webhooks time out when the queue backs up", auto_link=False)
    mem("The garden sensors report soil moisture every fifteen minutes", auto_link=False)
    edge_create(source_ref=first.id, target_ref=second.id)


def test_every_required_stage_runs_in_a_recall(mem):
    _store(mem)

    spent, calls = stages.time_stages([SearchQuery(query="billing webhook retries")], None)

    required = {label for _, _, label, _ in stages.STAGES} - stages.OPTIONAL_STAGES
    assert {label for label in required if calls[label] == 0} == set()
    assert {name for name, _ in stages.stage_rows()} <= set(spent)


def test_a_stage_the_pipeline_no_longer_has_stops_the_bench(mem, monkeypatch):
    _store(mem)
    gone = ("memory.search.pipeline", "no_such_stage", "no_such_stage", None)
    monkeypatch.setattr(stages, "STAGES", stages.STAGES + (gone,))

    with pytest.raises(stages.StageMissing, match="no_such_stage"):
        stages.time_stages([SearchQuery(query="billing webhook retries")], None)


def test_a_stage_its_caller_no_longer_looks_up_stops_the_bench(mem, monkeypatch):
    _store(mem)
    # hit_rows exists in the rows module, but recall looks it up in the pipeline module, so it is never timed
    unused = ("memory.search.rows", "hit_rows", "hit_rows (rows)", None)
    monkeypatch.setattr(stages, "STAGES", stages.STAGES + (unused,))

    with pytest.raises(stages.StageMissing, match=r"hit_rows \(rows\)"):
        stages.time_stages([SearchQuery(query="billing webhook retries")], None)
