"""Whisper's extra searches in `retrieve` (docs/whisper.md, stage 5): a prompt that is context and then a question
also searches with the question alone.
The stores and prompts were written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from memory.domain.search import SearchQuery
from whisper.asked import asked, sentences
from whisper.conf import WhisperConf
from whisper.models import WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.stages import retrieve as retrieve_module
from whisper.stages.retrieve import build_query, retrieve

from .conftest import fake_deps, hit, make_run

# ---- pure: which sentences a prompt asks


@pytest.mark.parametrize(("prompt", "question"), [
    ("ran a DELETE without a where on prod ten minutes ago. can we get the rows back?", "can we get the rows back?"),
    ("the nightly job died again\nTraceback (most recent call last):\n  File \"jobs.py\", line 3\nwhy does it die?",
     "why does it die?"),
    ("we bumped requests.get to 2.32 last week. does the proxy still work? and is 3.10 dropped?",
     "does the proxy still work? and is 3.10 dropped?"),
])
def test_the_question_sentences_of_a_prompt_with_context(prompt, question):
    assert asked(prompt) == question


@pytest.mark.parametrize("prompt", [
    "where is the backup kept?",  # only a question: the prompt itself is what it asks
    "how is it stored? where does it live?",  # only questions
    "deploy the solver change to production. then tag the release",  # no question
    "the build broke after the upgrade. why?",  # a question too short to search with alone
])
def test_no_separate_question(prompt):
    assert asked(prompt) is None


def test_a_dot_inside_a_word_does_not_end_a_sentence():
    assert sentences("bump 3.10 to 3.14 in requests.get. ok?") == ["bump 3.10 to 3.14 in requests.get.", "ok?"]


def recorded(answers: dict[str, list]):
    asked_texts = []

    def search(query: SearchQuery):
        asked_texts.append(query.query)
        return answers.get(query.query, [])
    return search, asked_texts


def test_a_prompt_with_context_also_searches_with_its_question():
    prompt = "the deploy went out and the dashboards are green. where is the database backed up?"
    search, texts = recorded({prompt: [hit("deploy", score=0.7)],
                              "where is the database backed up?": [hit("backup", score=0.4)]})
    run = make_run(prompt)
    deps = fake_deps(search=search)
    build_query(run, WhisperConf(), deps)
    retrieve(run, WhisperConf(), deps)
    assert texts == [prompt, "where is the database backed up?"]
    assert [c.node_id for c in run.candidates] == ["deploy", "backup"]


def test_a_plain_question_is_searched_once():
    search, texts = recorded({"where is the database backed up?": [hit("backup", score=0.4)]})
    run = make_run("where is the database backed up?")
    deps = fake_deps(search=search)
    build_query(run, WhisperConf(), deps)
    retrieve(run, WhisperConf(), deps)
    assert texts == ["where is the database backed up?"]


# ---- real store, real model


def candidates(prompt: str) -> set[str]:
    """Every memory of the prompt's last whisper decision's ledger, wherever it stopped."""
    decision = WhisperDecisionRow.objects.filter(prompt=prompt).order_by("-id").first()
    return set(WhisperCandidateRow.objects.filter(decision=decision).values_list("node_uid", flat=True))


def test_the_question_after_context_reaches_its_memory(mem, monkeypatch):
    backup = mem("The database is backed up by Litestream: it copies the SQLite file to object storage every "
                 "second.", type="fact", title="Database backups", auto_link=False)
    for topic in ("deploy", "dashboard", "alert", "uptime monitor", "release notes", "status page", "on-call",
                  "green build", "handover", "alert channel", "deploy window", "dashboard owner", "status page copy",
                  "on-call rota"):
        mem(f"The {topic} for the shop went out green after the Friday {topic} review; the {topic} runbook "
            f"lists who watches the {topic} and the {topic} channel.", type="fact", title=f"Shop {topic}",
            auto_link=False)
    prompt = ("the deploy went out, the dashboard and the status page are green, the uptime monitor and the "
              "alert channel are quiet, release notes posted, on-call handed over, the deploy window closed, "
              "the handover note is written and the green build is tagged for the dashboard owner. is the data "
              "kept anywhere else?")
    monkeypatch.setattr(retrieve_module, "asked", lambda text: None)  # the old path: the whole prompt only
    whisper_respond(prompt=prompt, session_id="whole")
    assert backup.id not in candidates(prompt)  # fourteen notes share the context's words; the question none
    monkeypatch.undo()
    whisper_respond(prompt=prompt, session_id="asked")
    assert backup.id in candidates(prompt)
