"""The sleep cycle over a store full of look-alikes: recurring dated events, numbered docs, templates (no LLM), and
what an LLM is shown of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute, sleep_cycle_run
from memory.models import MergeHistoryRow, NodeRow
from tests.maintenance.conftest import pair_blocks

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
DATED = [
    "2026-03-12: Sofia clarified the scope of the export feature",
    "2026-07-24: Sofia clarified the scope of the export feature",
    "2026-04-02: Sofia clarified that exports include archived projects",
    "2026-05-06: Sofia clarified that exports exclude drafts",
    "2026-05-02: Weekly sync with Marco about the billing ledger",
    "2026-05-09: Weekly sync with Marco about the billing ledger",
    "2026-05-16: Weekly sync with Marco about the billing ledger",
    "2026-02-10: Ran 8 km along the river",
    "2026-02-12: Ran 11 km along the river",
    "2026-05-20: Cloud bill came in at 920 euros",
    "2026-06-20: Cloud bill came in at 870 euros",
    "2026-04-01: Deployed release 4.2 to production",
    "2026-04-15: Deployed release 4.3 to production",
]
DOCS = [
    ("chatgpt-search(3)", "Search the web and return ranked results with titles and snippets"),
    ("chatgpt-fetch(3)", "Fetch a web page and return its readable text with the title"),
    ("Kafka 3.6 upgrade notes", "Brokers need a rolling restart; clients are compatible"),
    ("Kafka 3.7 upgrade notes", "Brokers need a rolling restart; clients need 3.5 or later"),
]
TEMPLATES = [
    "Server web-01 has 16 GB of RAM and 4 cores",
    "Server web-02 has 16 GB of RAM and 4 cores",
    "Sensor bed-3 reads soil moisture at 30 cm depth",
    "Sensor bed-4 reads soil moisture at 30 cm depth",
]


def test_a_sleep_cycle_over_recurring_dated_events_makes_no_false_conflict_or_merge(no_llm, remember):
    for i, text in enumerate(DATED):
        remember(text, type="observation", now=T0 + timedelta(days=i))
    for i, (title, text) in enumerate(DOCS):
        remember(text, title=title, now=T0 + timedelta(days=i))
    for i, text in enumerate(TEMPLATES):
        remember(text, now=T0 + timedelta(days=i))
    old = remember("The billing service runs on port 8080", now=T0).id
    new = remember("The billing service runs on port 9090", now=T0 + timedelta(days=3)).id
    outcomes = sleep_cycle_run(trigger="test", now=T0 + timedelta(days=20))
    assert {o.job: o.status for o in outcomes}["conflict_detector"] == "ok"
    conflicts = [(p.payload["source_id"], p.payload["target_id"], p.payload["edge"])
                 for p in ProposalRow.objects.filter(kind="conflict")]
    assert conflicts == [(new, old, "evolved_from")]  # the one real change, and nothing else
    assert ProposalRow.objects.filter(kind="merge").count() == 0
    assert MergeHistoryRow.objects.count() == 0
    assert NodeRow.objects.filter(is_self=False).count() == len(DATED) + len(DOCS) + len(TEMPLATES) + 2


def _everything_is_a_conflict_or_duplicate(kind, user):
    """A judge that agrees to anything it is shown (so a pair that reaches it is acted on)."""
    if kind == "conflicts":
        return {"results": [{"pair": n, "same_subject": True, "conflict": True, "type": "tension",
                             "explanation": "judged"} for n in pair_blocks(user)]}
    return {"results": [{"pair": n, "is_duplicate": True, "reason": "judged"} for n in pair_blocks(user)]}


@pytest.mark.parametrize("job", ["conflict_detector", "duplicate_merger"])
def test_with_an_llm_recurring_dated_entries_never_reach_the_model(llm, remember, job):
    for i, text in enumerate(DATED[:7]):
        remember(text, type="observation", now=T0 + timedelta(days=i))
    remember("The billing service runs on port 8080", type="observation", now=T0)
    remember("The billing service runs on port 9090", type="observation", now=T0 + timedelta(days=3))
    llm.answer = _everything_is_a_conflict_or_duplicate
    outcome = job_execute(job, now=T0 + timedelta(days=20))
    shown = [block for r in llm.requests for block in pair_blocks(r["messages"][1]["content"]).values()]
    assert [b for b in shown if b.count("\n2026-") == 2] == []  # no two entries of a recurring event
    assert [b for b in shown if "port 8080" in b and "port 9090" in b] != []  # the real change is still judged
    assert outcome.counts["distinct"] == 9  # the dated pairs among the neighbours, dropped unasked
