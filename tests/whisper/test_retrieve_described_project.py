"""A prompt asked in one project may describe another instead of naming it ("when does the water at the plots go
on", asked at work): the other project's note that BM25 ranks first over every space joins the candidates with the
probability recall gives it when no project is preferred (whisper.stages.retrieve._described_elsewhere; docs/whisper.md,
stage 5 `retrieve`). Every store and phrasing here was written for these tests, not taken from the bench's scenarios."""

from __future__ import annotations

import pytest

from tests.postgres import sqlite_only
from whisper.services import whisper_respond

WORK = [
    ("Quayside deploy", "Quayside deploys run from the main branch through the deploy workflow; staging first, then "
                        "production after a manual approval."),
    ("Quayside setup", "Quayside local setup: copy .env.example to .env, start Postgres with docker compose, run the "
                       "migrations and the seed script."),
    ("Sprint planning", "Sprint planning is on Monday mornings; the sprint runs two weeks and ends with a demo on "
                        "Friday afternoon."),
    ("Quayside tests", "Run the quayside tests with pytest -n auto; the integration tests need the compose stack up."),
    ("On call", "Quayside on-call rotates weekly on Monday at 10:00; the rota lives in the team calendar."),
    ("Release notes", "Release notes for quayside are written in the changelog before each tag and posted to the team "
                      "channel."),
    ("Water usage service", "The quayside water usage service reads meter data every night and plans the turn-on of "
                            "pumps."),
]


@pytest.fixture
def store(mem):
    notes = {
        "tap": mem("The water tap at the plots is turned on from 1 April and off again on 1 November; the shed key "
                   "hangs in the key safe, code 4471.", type="fact", space="allotment", title="Plot water and shed",
                   auto_link=False),
        "rent": mem("Plot rent is 85 euros a year, paid to the treasurer before 1 March.", type="fact",
                    space="allotment", title="Plot rent", auto_link=False),
    }
    for title, text in WORK:
        notes[title] = mem(text, type="fact", space="quayside", title=title, auto_link=False)
    return notes


@sqlite_only(reason="the probabilities it rests on are SQLite's (FTS5 BM25 in recall's probability)")
@pytest.mark.parametrize(("prompt", "key"), [
    ("when does the water at the plots go on", "tap"),
    ("how much is the plot rent and who do I pay it to", "rent"),
])
def test_another_project_described_not_named_is_found(store, prompt, key):
    # Before, scored against quayside alone, the allotment's note stayed under the gate.
    result = whisper_respond(prompt=prompt, session_id="described", space="quayside")
    assert (result.decision, result.node_ids) == ("injected", (store[key].id,))


def test_no_search_elsewhere_when_bm25s_first_is_the_projects_own():
    # The first recall ranks BM25 over every space: when its first is this project's (or a global) memory, the
    # search with no project preferred could bring no other project's first, so it is not asked.
    from dataclasses import replace

    from whisper.conf import WhisperConf
    from whisper.stages.retrieve import retrieve

    from .conftest import fake_deps, hit, intent, make_run

    def search_with(first_space):
        seen = []

        def search(q):
            seen.append(q.default_space if q.spaces is None else tuple(q.spaces))
            return [replace(hit("n1", space=first_space), fts_rank=1)]
        retrieve(make_run("how do we sign users in?", space="ormah", intent=intent()), WhisperConf(),
                 fake_deps(search=search, spaces=lambda: frozenset({"shop", "ormah"})))
        return seen

    assert search_with("ormah") == ["ormah", ("ormah", None)]
    assert search_with(None) == ["ormah", ("ormah", None)]
    assert search_with("shop") == ["ormah", ("ormah", None), None]
