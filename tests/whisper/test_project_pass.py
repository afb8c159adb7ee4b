"""Whisper's per-project pass (whisper.stages.retrieve._search, docs/whisper.md "The per-project pass"): for a prompt
scored against a project, recall also runs over that project and the global memories alone, and each memory keeps
its better hit. Recall's relative features (BM25 over the query's best, the cosine gap, the ranks) then measure a
project's note against the project's notes, not against long imported pages that share more of the prompt's words.
The store and prompts were written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from tests.postgres import sqlite_only
from whisper.conf import WhisperConf
from whisper.models import WhisperCandidateRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.stages.retrieve import _search
from memory.domain.search import SearchQuery

from .conftest import fake_deps, hit


def recorded(answers: dict):
    """A search that answers by the query's `spaces` and records every query it was asked."""
    asked = []

    def search(query: SearchQuery):
        asked.append(query)
        return answers[tuple(query.spaces) if query.spaces is not None else None]
    return search, asked


def test_a_project_prompt_also_searches_its_project_and_the_global_memories():
    search, asked = recorded({
        None: [hit("page-a", score=0.9), hit("page-b", score=0.8), hit("note", score=0.1, space="quayside")],
        ("quayside", None): [hit("note", score=0.7, space="quayside"), hit("global", score=0.3)],
    })
    query = SearchQuery(query="change the receipt template", limit=3, default_space="quayside")
    hits = _search(query, WhisperConf(), fake_deps(search=search))
    assert [q.spaces for q in asked] == [None, ["quayside", None]]
    # Each memory keeps its better hit (the note's 0.7 from the project's own pass), the best `limit` stay.
    assert [(h.node_id, h.score) for h in hits] == [("page-a", 0.9), ("page-b", 0.8), ("note", 0.7)]


@pytest.mark.parametrize(("space", "conf"), [
    (None, WhisperConf()),  # a prompt outside any project: one recall
    ("quayside", WhisperConf(project_pass=False)),  # the pass switched off
])
def test_one_recall_without_a_project_or_with_the_pass_off(space, conf):
    search, asked = recorded({None: [hit("page-a", score=0.9)]})
    query = SearchQuery(query="change the receipt template", limit=3, default_space=space)
    assert [h.node_id for h in _search(query, conf, fake_deps(search=search))] == ["page-a"]
    assert len(asked) == 1


def candidates(prompt: str) -> set[str]:
    """The memories of the prompt's last whisper decision's ledger (every candidate, wherever it stopped)."""
    decision = WhisperDecisionRow.objects.filter(prompt=prompt).order_by("-id").first()
    return set(WhisperCandidateRow.objects.filter(decision=decision).values_list("node_uid", flat=True))


@sqlite_only(reason="the order it rests on is SQLite's (FTS5 BM25 in recall's probability)")
def test_the_projects_note_reaches_whisper_when_pages_fill_recalls_hits(mem, settings):
    # Recall over the whole store ranks the note 11th at probability 0.02 behind ten pages of another space; over
    # quayside and the global memories alone it scores 0.34.
    note = mem("Receipts are mailed by Postmark from the layout in mail/receipt.html.", type="fact",
               space="quayside", title="Receipts", auto_link=False)
    topics = ("transactional email", "email templates", "email receipts", "sending email", "email layouts",
              "email previews", "email testing", "email headers", "receipt emails", "template inheritance")
    for i, topic in enumerate(topics):
        body = " ".join(f"Section {j}: how to change the {topic} template, render the receipt email template and "
                        f"send the email template from a Python app with a template engine." for j in range(12))
        mem(body, type="fact", space="docs", title=f"mailkit {i}: {topic}", auto_link=False)
    prompt = "change the receipt email template"
    settings.ORMAH = {**settings.ORMAH, "WHISPER_PROJECT_PASS": False}
    whisper_respond(prompt=prompt, session_id="off", space="quayside")
    assert note.id not in candidates(prompt)
    settings.ORMAH = {**settings.ORMAH, "WHISPER_PROJECT_PASS": True}
    whisper_respond(prompt=prompt, session_id="on", space="quayside")
    assert note.id in candidates(prompt)
