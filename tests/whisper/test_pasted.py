"""whisper.pasted: output alone (fenced, tagged, JSON, or every line in the shape of tool output) is not a person
asking; a paste with any words of a person around it is."""

from __future__ import annotations

import pytest

from whisper.models import WhisperDecisionRow
from whisper.services import whisper_respond

from whisper.pasted import is_pasted_output


@pytest.mark.parametrize("prompt", [
    "```\n$ make migrate\nNo changes detected\n```",
    "~~~text\nexport done: 139 rows, EUR 7.452,00\n~~~",
    "```\nwarehouse sync 03:00 ok\n```\n\n```\nwarehouse sync 04:00 ok\n```",
    "<tool-result>exit code 0</tool-result>",
    '{"status": "ok", "rows": 12}',
    "[1, 2, 3]",
    "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\n    main()\nValueError: bad depot",
    "2026-11-28 10:00:01 INFO worker started\n2026-11-28 10:00:02 ERROR queue unreachable",
    "yarn ERR! network timeout\nyarn ERR! could not fetch",
    "$ pytest -q\n3 passed, 1 skipped in 0.42s",
    "diff --git a/x.py b/x.py\n@@ -1,2 +1,2 @@",
])
def test_output_alone_is_pasted_output(prompt):
    assert is_pasted_output(prompt)


@pytest.mark.parametrize("prompt", [
    # a person's words around the paste: whisper must answer these
    "ran the import, got this:\n```\nKeyError: 'depot_17'\n```\nhow do I fix it?",
    "only on prod, works fine locally:\n\n```\nSqliteError: no such column: bakes.flour\n```",
    "```\n$ make dev\nError: unable to open database file\n```\n\nfresh checkout, nothing else done yet",
    "<system-reminder>be brief</system-reminder>\nwhich port does the server listen on",
    "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nValueError: bad depot\nwhy?",
    # a person's own text, one line or several
    "KeyError: 'depot_17' when I run the solver",
    "deploy the new solver timeout change to production",
    "plan my week:\n- two runs\n- one long ride",
    "# my notes\nthe dentist is Dr Jansen",
    "[Image #1]",
    "",
])
def test_a_person_s_text_is_not_pasted_output(prompt):
    assert not is_pasted_output(prompt)


# End to end through whisper_respond: the real store, embedder and recall.

PORT = "The Ormah server listens on 127.0.0.1:8787 by default; ORMAH_PORT changes it."


@pytest.fixture
def port_memory(mem):
    return mem(PORT, space="ormah", auto_link=False)


def _respond(prompt):
    return whisper_respond(prompt=prompt, session_id="s1", space="ormah")


def test_server_output_alone_stays_silent_as_machine_output(port_memory):
    result = _respond("```\n$ ormah serve\nINFO  listening on 127.0.0.1:8787 (ORMAH_PORT unset, default port)\n```")
    assert (result.decision, result.node_ids) == ("silent:synthetic", ())
    assert WhisperDecisionRow.objects.get().matched_pattern == "(pasted output)"


def test_the_same_output_with_a_question_around_it_is_answered(port_memory):
    result = _respond("```\n$ ormah serve\nINFO  listening on 127.0.0.1:8787 (ORMAH_PORT unset, default port)\n```\n"
                      "which port does the ormah server listen on by default, and how do I change it?")
    assert (result.decision, result.node_ids) == ("injected", (port_memory.id,))


@pytest.mark.parametrize("prompt", [
    # a log level word opening a person's line is not a log level as a log writes it
    "Error in the nightly export again\nInfo on it is in the ticket",
    "warning shown twice on deploy\nerror after that, same as yesterday",
    # a line ending with "?" is a person asking, whatever its shape
    "Error: could not find app loafbook-staging\nError: which app name does staging use?",
    # a quoted address or short string opening a person's line is not a JSON member
    '"jan@acme.nl": bounced twice this week\n"jan@acme.com": the new one, use it from now on',
    '"lgtm": approved, merge it\n"nit": a small remark, not blocking',
])
def test_a_person_s_lines_in_an_output_s_words_are_not_pasted_output(prompt):
    assert not is_pasted_output(prompt)


@pytest.mark.parametrize("prompt", [
    "[ERROR] queue unreachable\n[INFO] retrying in 5 s",
    "WARNING: the config has no depot\nerror: solver gave up",
    "ERROR queue unreachable\nINFO  retrying in 5 s",
    '"status": "ok",\n"rows": 12,\n"errors": []',
])
def test_log_levels_and_json_members_as_output_writes_them_are_pasted_output(prompt):
    assert is_pasted_output(prompt)


def test_a_person_s_lines_opening_with_error_are_answered_end_to_end(port_memory):
    result = _respond("Error on startup again, port taken\nError: which port does the ormah server listen on?")
    assert (result.decision, result.node_ids) == ("injected", (port_memory.id,))


@pytest.mark.parametrize("prompt", [
    '"@types/node": "^20.1.0",\n"react": "^18.2.0"',       # a package.json's scoped package (review1, session 18)
    '"user name": "jdoe",\n"e-mail": "jdoe@example.com"',  # a key with a space
])
def test_json_members_with_any_key_are_pasted_output(prompt):
    assert is_pasted_output(prompt)
