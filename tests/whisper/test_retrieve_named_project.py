"""Which other project a prompt names when it names several (whisper.stages.retrieve.named_project): an invented name
is a project's surely; a space named by an ordinary English word ("docs") may be the word. Texts written for this
test."""

from __future__ import annotations

import pytest

from tests.postgres import sqlite_only
from whisper.services import whisper_respond
from whisper.stages.retrieve import named_project

PROMPT = "how does tidewater build its documentation site? we want the same thing for the quayside internal docs"


@pytest.mark.parametrize(("others", "text", "expected"), [
    ({"tidewater"}, "how does tidewater sign users in?", "tidewater"),
    (set(), "how do we sign users in?", None),
    ({"tidewater", "docs"}, PROMPT, "tidewater"),  # "docs" here is the word, not the space
    ({"tidewater", "docs"}, "how does tidewater publish to Docs?", None),  # written as a name: both are named
    ({"tidewater", "harbourlight"}, "does tidewater call harbourlight?", None),  # two invented names: neither wins
    ({"docs", "bakery"}, "the docs of the bakery", None),  # two ordinary words: neither wins
])
def test_the_one_other_project_a_prompt_names(others, text, expected):
    assert named_project(set(others), text) == expected


@sqlite_only(reason="the probabilities it rests on are SQLite's (FTS5 BM25 in recall's probability)")
def test_a_project_named_beside_an_ordinary_word_space_is_the_one_scored_against(mem):
    # Without the rule the prompt named two other projects (tidewater and docs), so it was scored against its own
    # project, quayside: tidewater's note became another project's (recall's other_space) and stayed under the gate.
    note = mem("MkDocs Material renders the markdown under docs/ into static pages; the release workflow pushes "
               "them to GitHub Pages on each tag.", type="fact", space="tidewater",
               title="Tidewater docs", auto_link=False)
    mem("Quayside deploys run from the main branch through the deploy workflow; staging first, then production "
        "after a manual approval.", type="fact", space="quayside", title="Quayside deploy", auto_link=False)
    mem("Quayside local setup: copy .env.example to .env, start Postgres with docker compose, run the migrations "
        "and the seed script, then the dev server.", type="fact", space="quayside", title="Quayside local setup",
        auto_link=False)
    mem("Style guide for the internal docs: short sentences, one idea per paragraph, code in fenced blocks.",
        type="fact", space="docs", title="Writing style", auto_link=False)
    result = whisper_respond(prompt=PROMPT, session_id="s1", space="quayside")
    assert (result.decision, result.node_ids) == ("injected", (note.id,))
