"""The logistic gate's project inputs (issue 11, item 9). `own_titled`: a note of the prompt's project whose title
shares a distinctive word with the prompt is the project's own record of what the prompt is about ("Integration tests"
for "run the integration tests for me"); a note that is merely near the prompt is not. `overview`: a project's
overview (type `project`) is near every prompt of its project, so its probability and cosine overstate how well it
answers one. The store and prompts here were written for these tests, not taken from the bench's scenarios; the
tasks below are silent with the gate before `own_titled` (checked by running them with `WHISPER_GATE_WEIGHTS` set to
session 10's weights and 0 for the new inputs, and `WHISPER_GATE_LOGIT` 0.40), and the overview near miss is
whispered with the gate before `overview` (session 11's first weights, `WHISPER_GATE_LOGIT` 0.20)."""

from __future__ import annotations

import pytest

from tests.support import stores
from whisper.services import whisper_respond
from whisper.stages.gate import own_titled

from .conftest import cand, hit, make_run

SPACE = "tidewater"

pytestmark = pytest.mark.usefixtures("small_store_gate")  # conftest: the gate at 0.30, not the default


def titled(title: str, *, space: str | None = SPACE, content: str = "A short note.") -> object:
    c = cand(title.lower(), title=title, content=content, space=space, probability=0.4)
    c.hit = hit(c.node_id, title=title, content=content, space=space)
    return c


@pytest.mark.parametrize(("title", "space", "content", "expected"), [
    ("Integration tests", SPACE, "A short note.", 1.0),
    ("Release process", SPACE, "A short note.", 0.0),  # no word of the prompt in its title
    ("Integration tests", "harbourmaster", "A short note.", 0.0),  # another project's note
    ("Integration tests", None, "A short note.", 0.0),  # a global note
    ("Integration tests", SPACE, "x" * 1001, 0.0),  # a page, not a note
    ("Integration tests run with make itest.", SPACE, "Integration tests run with make itest.", 0.0),  # untitled:
])                                                                        # its title is its first line
def test_own_titled(title, space, content, expected):
    run = make_run("run the integration tests for me", space=SPACE, target_space=SPACE)
    assert own_titled(titled(title, space=space, content=content), run) == expected


def test_the_projects_name_in_a_title_is_no_shared_word():
    run = make_run("what's the tidewater grafana url", space=SPACE, target_space=SPACE)
    assert own_titled(titled("Tidewater overview"), run) == 0.0


def test_outside_a_project_nothing_is_own_titled():
    run = make_run("run the integration tests for me", space=None, target_space=None)
    assert own_titled(titled("Integration tests"), run) == 0.0


@pytest.fixture
def tidewater(mem):
    notes = {
        "overview": stores.TIDEWATER_OVERVIEW,
        "itests": ("Integration tests", "procedure",
                   "The integration suite lives in tests/integration and runs with `make itest`; start the Postgres "
                   "container first with `docker compose up -d db`."),
        "release": ("Release process", "procedure",
                    "Bump the version in pyproject.toml, tag vX.Y.Z on main and push the tag; CI builds the image and "
                    "deploys it."),
        "pricing": stores.BERTH_PRICING,
        "tides": ("Tide tables", "fact",
                  "Tide tables come from the harbour master's feed every night at 02:00 and are cached for a week."),
        "auth": stores.STAFF_SIGN_IN,
        "migrations": ("Database migrations", "procedure",
                       "Alembic migrations, one per pull request; never edit a migration once it is merged."),
    }
    return stores.project_notes(mem, notes, space=SPACE)


@pytest.mark.parametrize(("prompt", "key"), [
    ("add an integration test for cancelling a booking", "itests"),  # log-odds -0.52 with session 10's gate, +0.83 now
    ("cut a release with the booking fix", "release"),  # -0.39, +0.93
    ("we need a migration that adds a boat_length column", "migrations"),  # -0.64, +0.59
    ("write the migration for the new skipper table", "migrations"),  # -0.04, +1.13
])
def test_a_task_on_a_topic_the_project_has_a_note_for_gets_that_note(tidewater, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="own-titled", space=SPACE)
    assert (result.decision, result.node_ids) == ("injected", (tidewater[key].id,))


@pytest.mark.parametrize("prompt", [
    "what's the Grafana dashboard URL for the booking service",  # the overview is the best hit
    "set up Sentry for the booking API",
    "translate the booking page into German",
])
def test_a_prompt_about_something_the_project_never_noted_stays_silent(tidewater, prompt):
    assert whisper_respond(prompt=prompt, session_id="own-titled", space=SPACE).decision != "injected"


def test_the_overview_is_not_whispered_for_what_it_does_not_hold(tidewater):
    # The overview was the lone hit at log-odds +0.65 before the input, -0.28 with it.
    result = whisper_respond(prompt="does tidewater send SMS reminders to skippers", session_id="overview",
                             space=SPACE)
    assert result.decision != "injected"


def test_an_overview_that_answers_is_still_whispered(tidewater):
    result = whisper_respond(prompt="which harbour uses tidewater", session_id="overview", space=SPACE)
    assert (result.decision, result.node_ids) == ("injected", (tidewater["overview"].id,))
