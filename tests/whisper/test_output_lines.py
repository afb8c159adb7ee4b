"""whisper.output_lines (session 26, near3): a prompt of two or more lines none of which a person wrote is output alone
and gets silence at stage 1, whatever shapes its lines have; one line that asks, requests or says "I" / "we" makes
it a person's prompt."""

from __future__ import annotations

import pytest

from whisper.models import WhisperDecisionRow
from whisper.output_lines import is_output_alone, machine_marks
from whisper.pasted import is_pasted_output
from whisper.services import whisper_respond


@pytest.mark.parametrize("prompt", [
    "$ uv run black --check .\n12 files would be left unchanged",
    "Resolved 12 packages in 0.80s\nInstalled 2 packages in 9ms\n + attrs==24.2.0",
    "On branch fix/trim-header\nYour branch is ahead of 'origin/fix/trim-header' by 2 commits.\n\nnothing to commit",
    " app/views.py   |  6 +++---\n 1 file changed, 3 insertions(+), 3 deletions(-)",
    "$ git log --oneline -2\n4f2a9c1 fix: trim the header\n0b7e3d2 feat: add the export",
    "$ pytest -q tests/test_a.py\n.....\n5 passed in 0.21s",
    "PostToolUse:Write hook feedback:\n[npx eslint --fix src/a.ts]: 1 problem fixed",
])
def test_output_no_shape_list_knows_is_output_alone(prompt):
    assert not is_pasted_output(prompt)  # the shapes whisper.pasted knows miss a line of each
    assert is_output_alone(prompt)


@pytest.mark.parametrize("prompt", [
    # a line that asks, requests, ends with "?" or speaks in the first person: a person's prompt
    "$ uv run pytest\n3 failed, 10 passed in 2.01s\nwhy do the date tests fail only on CI",
    "$ ormah serve\nlistening on 127.0.0.1:8787\nis that the default port?",
    "Resolved 12 packages in 0.80s\nI expected lxml in there",
    "3 failed, 10 passed in 2.01s\nwe never had these failures before",
    "$ make build\nerror: missing libpq\nfix the Dockerfile so it installs it",
    "ik heb dit gekregen:\nFactuur 2026-11 EUR 120,00",
    # one line, whatever its shape, is left to the other checks
    "12 files would be left unchanged",
    # fenced output with a person's line around it
    "ran it again:\n```\n$ make dev\nError: unable to open database file\n```\nsame as before?",
])
def test_a_person_s_line_makes_it_a_person_s_prompt(prompt):
    assert not is_output_alone(prompt)


@pytest.mark.parametrize("prompt", [
    # plain lines a person typed, with no pronoun, question or request: no mark of machine text (review15)
    "The checkout page is slow.\nIt takes 4 seconds on mobile.",
    "Typo fix in the README\nalso the date format in the footer",
    "Notes from the standup\n- Sam is on leave Friday\n- release moved to Tuesday",
    "# Notes\nthe dentist is Dr Jansen",
    "> Beste Noor, de huur gaat naar 725 per maand\n> Groet, Rik",
])
def test_plain_lines_without_marks_of_machine_text_are_a_person_s(prompt):
    assert not is_output_alone(prompt)


@pytest.mark.parametrize(("line", "marked"), [
    ("$ uv run black --check .", True), ("CONTAINER ID   IMAGE", True), ("On branch fix/edge", True),
    ("Resolved 12 packages in 0.80s", True), ("4f2a9c1 fix: trim the header", True), ("..........", True),
    (" app/views.py | 6 +++---", True), ("PostToolUse:Write hook feedback:", True),
    ("It takes 4 seconds on mobile.", False), ("we moved in 2026.", False), ("Typo fix in the README", False),
])
def test_marks_of_machine_text(line, marked):
    assert machine_marks(line) is marked


# End to end through whisper_respond: the real store, embedder and recall.

PORT = "The Ormah server listens on 127.0.0.1:8787 by default; ORMAH_PORT changes it."


@pytest.fixture
def port_memory(mem):
    return mem(PORT, space="ormah", auto_link=False)


def _respond(prompt):
    return whisper_respond(prompt=prompt, session_id="s1", space="ormah")


def test_server_output_in_no_known_shape_stays_silent(port_memory):
    result = _respond("$ ormah serve --port 8787\nlistening on 127.0.0.1:8787 (ORMAH_PORT unset, the default port)")
    assert (result.decision, result.node_ids) == ("silent:synthetic", ())
    assert WhisperDecisionRow.objects.get().matched_pattern == "(pasted output)"


def test_the_same_output_with_a_person_s_question_is_answered(port_memory):
    result = _respond("$ ormah serve --port 8787\nlistening on 127.0.0.1:8787 (ORMAH_PORT unset, the default port)\n"
                      "which port does the ormah server listen on by default, and how do I change it?")
    assert (result.decision, result.node_ids) == ("injected", (port_memory.id,))
