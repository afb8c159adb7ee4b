"""A custom slash command with arguments is the person's prompt: whisper answers its arguments (whisper.text)."""

from __future__ import annotations

import pytest

from whisper.models import SessionPromptRow, WhisperDecisionRow
from whisper.services import whisper_respond
from whisper.text import slash_command_text

WRAPPED = ("<command-message>ports is running…</command-message>\n<command-name>/ports</command-name>\n"
           "<command-args>which port does the ormah server listen on by default?</command-args>")


@pytest.mark.parametrize(("prompt", "typed"), [
    (WRAPPED, "which port does the ormah server listen on by default?"),
    ("<command-name>/plan</command-name>\n<command-message>plan</command-message>\n"
     "<command-args>\n  move the   sync job\n to nightly </command-args>", "move the sync job to nightly"),
    ("<command-message>clear</command-message>\n<command-name>/clear</command-name>\n<command-args></command-args>",
     None),
    ("<command-name>/compact</command-name>", None),
    ("<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>sonnet</command-args>",
     None),
    ("<command-name>/effort</command-name><command-args>very high</command-args>", None),
    ("<command-args>no command around it</command-args>", None),
    ("which port does <command-name>/x</command-name> use", None),
    ("which port does the server use?", None),
])
def test_the_arguments_of_a_slash_command_are_what_the_person_typed(prompt, typed):
    assert slash_command_text(prompt) == typed


def test_a_slash_command_with_a_question_in_its_arguments_gets_its_memory(mem):
    port = mem("The Ormah server listens on 127.0.0.1:8787 by default.", space="ormah", auto_link=False)
    result = whisper_respond(prompt=WRAPPED, session_id="s1", space="ormah")
    assert (result.decision, result.node_ids) == ("injected", (port.id,))
    row = WhisperDecisionRow.objects.get()
    assert row.prompt.startswith("<command-message>ports is running")  # the ledger keeps what came in
    assert list(SessionPromptRow.objects.values_list("prompt", flat=True)) == [
        "which port does the ormah server listen on by default?"]


def test_a_slash_command_without_arguments_stays_synthetic(mem):
    mem("The Ormah server listens on 127.0.0.1:8787 by default.", space="ormah", auto_link=False)
    prompt = "<command-message>ports is running…</command-message>\n<command-name>/ports</command-name>"
    result = whisper_respond(prompt=prompt, session_id="s1", space="ormah")
    assert (result.decision, result.node_ids) == ("silent:synthetic", ())
