"""The follow-up route's two session-15 conditions (whisper.stages.gate._follow_up_answer; docs/whisper.md, "The
follow-up route"): another project's memory counts at its space factor, and a follow-up that asks nothing does not
take the route. Small invented stores, the real model; the cases are the shapes of batch 6's dev false injections
(a docs README on a schema follow-up in a project, a dentist note on "ok …, calling them now"), not their words."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.domain.node import utcnow
from tests.support import stores
from whisper.conf import WhisperConf
from whisper.models import WhisperCandidateRow
from whisper.services import whisper_respond


@pytest.fixture
def dentist(mem):
    return stores.dentist(mem, filling=True)


def test_a_follow_up_that_asks_nothing_does_not_take_the_route(dentist):
    now = utcnow()
    first = whisper_respond(prompt="when's my next dentist appointment?", session_id="d1",
                            now=now - timedelta(seconds=30))
    assert dentist["appointment"].id in first.node_ids
    result = whisper_respond(prompt="ok dr jansen, calling them now", session_id="d1", now=now)
    # The route's line in the ledger shows the follow-up cosine against `follow_up_cosine`. What the logistic gate
    # passes on its own is not the route: since session 24's refit (threshold -0.40) the practice's note, with the
    # phone number, passes it on PostgreSQL's BM25 (log-odds -0.06) and stays under it on SQLite's.
    routed = WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id, injected=True,
                                                gate_threshold=WhisperConf().follow_up_cosine)
    assert not routed.exists()
    assert dentist["appointment"].id not in result.node_ids and dentist["filling"].id not in result.node_ids


@pytest.fixture
def schema(mem):
    return {
        "migrations": mem("Database migrations in quayside: write them with alembic revision --autogenerate and "
                          "review the generated file before committing.", title="Writing migrations",
                          space="quayside", tags=["database"], auto_link=False),
        "deploy": mem("quayside deploys from main through the GitHub Actions workflow deploy.yml.", title="Deploys",
                      space="quayside", auto_link=False),
        "readme": mem("Schemathesis README: it generates test cases from your OpenAPI schema and checks that every "
                      "change to the schema keeps the API valid; the maintainers sign off on each release.",
                      title="Schemathesis: README", space="docs", tags=["docs", "schemathesis"], auto_link=False),
    }


def test_another_projects_memory_counts_at_its_space_factor_on_the_follow_up_route(schema):
    now = utcnow()
    first = whisper_respond(prompt="how do I write a migration here?", session_id="q1", space="quayside",
                            now=now - timedelta(seconds=30))
    assert schema["migrations"].id in first.node_ids
    result = whisper_respond(prompt="and who has to sign off before I change the schema?", session_id="q1",
                             space="quayside", now=now)
    assert schema["readme"].id not in result.node_ids
