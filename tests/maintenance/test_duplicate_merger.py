"""duplicate_merger on a seeded store: clear duplicates merge (undoably), likely ones are proposed."""

from __future__ import annotations

import pytest

from maintenance.models import ProposalRow
from maintenance.runner import job_execute
from memory import runtime
from memory.models import MergeHistoryRow, NodeRow
from tests.maintenance.conftest import pair_blocks

SQLITE_A = "Ormah uses SQLite as the index of its markdown files"
SQLITE_B = "Ormah uses SQLite as the index for its markdown files."
DARK = "Robin prefers dark mode in every editor"
LIGHT = "Robin prefers light mode in every editor"
TABS = "I like tabs over spaces"
NO_TABS = "I do not like tabs over spaces"
GRAFANA_A = "Our team uses Grafana for dashboards of the billing service"
GRAFANA_B = "The billing service dashboards live in Grafana, which our team uses"


@pytest.fixture
def seeded(remember):
    nodes = {
        "sqlite_a": remember(SQLITE_A), "sqlite_b": remember(SQLITE_B),
        "dark": remember(DARK, type="preference"), "light": remember(LIGHT, type="preference"),
        "tabs": remember(TABS, type="preference"), "no_tabs": remember(NO_TABS, type="preference"),
        "other": remember("The billing service runs on port 8080"),
    }
    return {k: v.id for k, v in nodes.items()}


def live() -> list[str]:
    return sorted(NodeRow.objects.values_list("content", flat=True))


def test_without_llm_clear_duplicates_merge_and_likely_ones_are_proposed(no_llm, seeded, remember):
    seeded.update(grafana_a=remember(GRAFANA_A).id, grafana_b=remember(GRAFANA_B).id)
    outcome = job_execute("duplicate_merger")
    assert outcome.status == "ok"
    assert (outcome.counts["merged"], outcome.counts["proposed"]) == (1, 1)
    # the longer SQLITE_B is the keeper; negated tabs and dark/light (one word swapped for its opposite) are not
    # duplicates; the Grafana paraphrase adds "live" and is only proposed
    assert live() == sorted([SQLITE_B, DARK, LIGHT, TABS, NO_TABS, "The billing service runs on port 8080",
                             GRAFANA_A, GRAFANA_B])
    history = MergeHistoryRow.objects.get()
    assert (history.kept_uid, history.removed_uid) == (seeded["sqlite_b"], seeded["sqlite_a"])
    assert runtime.store().path_for(seeded["sqlite_a"]) is None
    proposal = ProposalRow.objects.get()
    assert (proposal.kind, sorted(proposal.node_uids)) == ("merge", sorted([seeded["grafana_a"], seeded["grafana_b"]]))
    assert proposal.reason == "They say the same thing in other words (similarity 0.92, 62% of the words shared)"


def test_a_second_run_has_nothing_new_to_examine(no_llm, seeded):
    job_execute("duplicate_merger")
    assert job_execute("duplicate_merger").counts == {"candidates": 0}


def test_with_llm_verdicts_decide_and_merged_text_is_written(llm, seeded):
    def answer(kind, user):
        assert kind == "duplicates"
        results = []
        for n, block in pair_blocks(user).items():
            dup = "SQLite" in block
            results.append({"pair": n, "is_duplicate": dup, "reason": "same fact" if dup else "different",
                            "merged_title": "SQLite index" if dup else None,
                            "merged_content": "Ormah indexes its markdown files with SQLite." if dup else None})
        return {"results": results}

    llm.answer = answer
    outcome = job_execute("duplicate_merger")
    assert (outcome.status, outcome.counts["merged"], outcome.counts["not_duplicate"]) == ("ok", 1, 2)
    assert outcome.counts["llm_calls"] == 1  # three candidate pairs, one call
    kept = NodeRow.objects.get(uid=seeded["sqlite_b"])
    assert (kept.title, kept.content) == ("SQLite index", "Ormah indexes its markdown files with SQLite.")
    assert not ProposalRow.objects.exists()
    assert llm.requests[0]["model"] == "scripted-model"
    assert llm.requests[0]["response_format"] == {"type": "json_object"}


def test_with_llm_a_duplicate_below_the_auto_line_becomes_a_proposal_with_preview(llm, remember):
    a = remember("The deploy pipeline takes twelve minutes on CI")
    b = remember("Deploys through the CI pipeline need about twelve minutes")
    llm.answer = lambda kind, user: {"results": [{"pair": 1, "is_duplicate": True, "reason": "same duration",
                                                  "merged_content": "CI deploys take twelve minutes."}]}
    assert job_execute("duplicate_merger").counts["proposed"] == 1
    proposal = ProposalRow.objects.get()
    assert (proposal.payload["keep_id"], proposal.payload["merged_content"]) == (b.id, "CI deploys take twelve minutes.")
    assert proposal.reason == "same duration (similarity 0.91, 42% of the words shared)"
    assert round(proposal.payload["score"]["composite"], 2) == 0.79
    assert NodeRow.objects.count() == 2


def test_with_llm_down_nothing_is_decided_and_the_nodes_stay_pending(llm, seeded):
    llm.answer = lambda kind, user: (503, "{}")
    outcome = job_execute("duplicate_merger")
    assert (outcome.status, outcome.counts["llm_failures"], outcome.counts["llm_calls"]) == ("partial", 1, 2)
    assert MergeHistoryRow.objects.count() == 0
    llm.answer = lambda kind, user: {"results": []}
    assert job_execute("duplicate_merger").counts["candidates"] == 7  # the failed chunk is examined again
