"""The OpenAI-compatible provider over real HTTP: JSON validation, fences, retries with backoff, the call cap."""

from __future__ import annotations

import pytest

from maintenance.conf import get_conf
from maintenance.errors import LLMBudgetExhausted, LLMUnavailable
from maintenance.llm import llm_for_run
from maintenance.llm.judges import ConflictVerdict, Consolidation, LinkVerdict


def test_no_provider_is_the_default(no_llm):
    assert llm_for_run(get_conf().llm) is None


def test_answers_in_code_fences_with_prose_are_accepted(llm):
    llm.answer = lambda kind, user: 'Sure!\n```json\n{"title": "T", "summary": "S", "type": "fact"}\n```'
    provider = llm_for_run(get_conf().llm)
    assert provider.complete_json(system="Consolidate.", user="x", schema=Consolidation) == Consolidation(
        title="T", summary="S", type="fact")
    assert llm.requests[0]["messages"][0] == {"role": "system", "content": "Consolidate."}


def test_server_errors_are_retried_then_the_answer_is_used(llm):
    replies = iter([(500, "{}"), {"title": "T", "summary": "S"}])
    llm.answer = lambda kind, user: next(replies)
    provider = llm_for_run(get_conf().llm)
    assert provider.complete_json(system="s", user="u", schema=Consolidation).title == "T"
    assert provider.calls == 2


def test_invalid_json_after_all_retries_is_unavailable(llm):
    llm.answer = lambda kind, user: "not json at all"
    provider = llm_for_run(get_conf().llm)
    with pytest.raises(LLMUnavailable):
        provider.complete_json(system="s", user="u", schema=Consolidation)
    assert provider.calls == 2  # one try and one retry (LLM_MAX_RETRIES=1 in tests)


def test_a_client_error_is_not_retried(llm):
    llm.answer = lambda kind, user: (401, '{"error": "bad key"}')
    provider = llm_for_run(get_conf().llm)
    with pytest.raises(LLMUnavailable, match="HTTP 401"):
        provider.complete_json(system="s", user="u", schema=Consolidation)
    assert provider.calls == 1


def test_the_per_run_cap_stops_calls(llm, settings):
    settings.ORMAH = {**settings.ORMAH, "LLM_MAX_CALLS_PER_RUN": 2}
    llm.answer = lambda kind, user: {"title": "T", "summary": "S"}
    provider = llm_for_run(get_conf().llm)
    provider.complete_json(system="s", user="u", schema=Consolidation)
    provider.complete_json(system="s", user="u", schema=Consolidation)
    with pytest.raises(LLMBudgetExhausted):
        provider.complete_json(system="s", user="u", schema=Consolidation)
    assert len(llm.requests) == 2


def test_the_api_key_is_sent_as_a_bearer_token(llm):
    llm.answer = lambda kind, user: {"title": "T", "summary": "S"}
    provider = llm_for_run(get_conf().llm)
    provider.complete_json(system="s", user="u", schema=Consolidation)
    assert llm.headers[0]["Authorization"] == "Bearer sk-test"


@pytest.mark.parametrize("raw, kind", [("update", "evolution"), ("Refinement", "evolution"),
                                       ("disagreement", "tension"), ("nothing", "none")])
def test_conflict_type_aliases(raw, kind):
    assert ConflictVerdict(pair=1, type=raw).type == kind


@pytest.mark.parametrize("raw, kind", [("support", "supports"), ("related", "related_to"), ("dependency", "depends_on"),
                                       ("part of", "part_of"), ("bogus", "none")])
def test_relationship_aliases(raw, kind):
    assert LinkVerdict(pair=1, relationship=raw).relationship == kind


def test_a_server_without_json_mode_is_asked_again_without_it(llm):
    def answer(kind, user):
        return (400, '{"error": "response_format not supported"}') if len(llm.requests) == 1 else {
            "title": "T", "summary": "S"}

    llm.answer = answer
    provider = llm_for_run(get_conf().llm)
    assert provider.complete_json(system="s", user="u", schema=Consolidation).title == "T"
    assert ["response_format" in r for r in llm.requests] == [True, False]
