"""The kind of thing a question asks for and whether a memory holds one (whisper.kinds; issue 11, item 9): a note
about the thing asked of that holds no date for "when is …", no number for "how many …", no name for "who …" or no
place for "where …" is not whispered (whisper.stages.focus). Every note and prompt here was written for these tests,
not taken from the bench's scenarios; each near miss of the real-store tests is whispered without the kinds
(checked by running them with `missing_kind` out of `whisper.stages.focus.off_focus`)."""

from __future__ import annotations

import pytest

from whisper.kinds import SCAN_CHARS, asked_kinds, holds_kind, missing_kind, scan_chars
from whisper.services import whisper_respond


@pytest.mark.parametrize(("prompt", "kinds"), [
    ("when is Pixel's vet appointment?", {"time"}),
    ("when's the next bin collection", {"time"}),
    ("what time does the pool open on Sundays?", {"time"}),
    ("how often does the backup job run?", {"time"}),
    ("how many replicas does the search service run?", {"count"}),  # a count of things (session 14)
    ("what port does the metrics exporter listen on?", {"number"}),
    ("how long do we keep the audit logs", {"number"}),
    ("when did we move the blog to Hugo?", set()),  # a note's own date answers when something happened
    ("how do I restart the worker", set()),  # a method
    ("why does the export time out?", set()),  # a reason
    ("the page breaks when I resize it", set()),  # "when" opens no question here
    ("the person who set it up left", set()),  # nor "who"
    ("restart the worker", set()),
])
def test_the_kind_a_question_asks_for(prompt, kinds):
    assert asked_kinds(prompt) == kinds


@pytest.mark.parametrize(("text", "kind", "holds"), [
    ("The appointment is on Thursday at 9:30.", "time", True),
    ("Collected every other Tuesday morning.", "time", True),
    ("Renewal due 2027-03-01.", "time", True),
    ("Runs nightly from cron.", "time", True),
    ("Pixel's vet is the clinic on Oak Street; she is nervous in the car.", "time", False),
    ("Version 1.0 of the library.", "time", False),  # a version is not a date
    ("The search service runs three replicas behind nginx.", "number", True),
    ("Exporter on port 9102.", "number", True),
    ("The search service sits behind nginx and reads the shared index.", "number", False),
    # A group or role answers "who" as a name does.
])
def test_a_memory_holding_a_thing_of_a_kind(text, kind, holds):
    assert holds_kind(text, kind) is holds


def test_only_a_bounded_prefix_of_a_long_note_is_read():
    # What whisper renders of a note is bounded (600 content characters by default), and so is the scan's cost.
    filler = "The exporter reads the queue and writes the files. " * (60_000 // 52)
    assert holds_kind("Exporter\n" + filler + "It moved on 2025-03-01 to port 9102.", "time") is False
    assert holds_kind("Exporter\n" + filler[: SCAN_CHARS - 200] + " It moved on 2025-03-01.", "time") is True


def test_a_raised_content_limit_widens_the_scan_to_what_whisper_renders(conf):
    # ORMAH_WHISPER_CONTENT_MAX_CHARS raised to 4000: the agent is shown a date at character ~2900, so the note is
    # not "missing" the time the question asks for. At the default limit the scan stays SCAN_CHARS (unchanged).
    from dataclasses import replace

    from whisper.stages.focus import focus_check, off_focus

    from .conftest import cand, make_run
    title, filler = "Exporter", "The exporter reads the queue and writes the files. " * 56
    content = filler + "The exporter moves to the new host on 2025-03-01."
    assert SCAN_CHARS < content.index("2025") < 4000
    assert scan_chars(title, conf.content_max_chars) == SCAN_CHARS
    assert scan_chars(title, 4000) == len(title) + 1 + 4000
    prompt = "when does the exporter move to the new host?"
    assert missing_kind(prompt, f"{title}\n{content}") == "time"
    assert off_focus(prompt, title=title, content=content, content_max_chars=conf.content_max_chars) == "kind: time"
    assert off_focus(prompt, title=title, content=content, content_max_chars=4000) is None
    note = cand("exporter", title=title, content=content, probability=0.7)
    assert focus_check(make_run(prompt, pool=[note]), conf, None) == "silent:off_focus"
    note = cand("exporter", title=title, content=content, probability=0.7)
    run = make_run(prompt, pool=[note])
    assert focus_check(run, replace(conf, content_max_chars=4000), None) is None and run.pool == [note]


def test_missing_kind_names_the_kind_the_memory_lacks():
    assert missing_kind("when is Pixel's vet appointment?", "Pixel's vet is the clinic on Oak Street.") == "time"
    assert missing_kind("when is Pixel's vet appointment?", "Pixel sees the vet on 3 December.") is None
    assert missing_kind("restart the worker", "The worker runs under systemd.") is None


@pytest.fixture
def household(mem):
    notes = {
        "vet": ("Pixel's vet", "Pixel's vet is the small animal clinic on Oak Street; she gets nervous in the car, "
                               "so bring the covered basket."),
        "search": ("Search service", "The search service sits behind nginx and reads the shared Tantivy index; "
                                     "its health check is the status endpoint."),
        "keys": ("Spare keys", "The spare keys hang in the hall cupboard behind the coats."),
        "bins": ("Bin collection", "The recycling bins are collected every other Tuesday morning."),
        "billing": ("Billing service", "The billing service is owned by the payments team; its invoices go out "
                                       "through the mail relay."),
    }
    return {k: mem(text, title=title, auto_link=False) for k, (title, text) in notes.items()}


@pytest.mark.parametrize("prompt", [
    "when is Pixel's next vet appointment?",
    "how many replicas does the search service run?",
])
def test_a_question_about_a_stored_thing_whose_kind_of_answer_is_not_stored_stays_silent(household, prompt):
    assert whisper_respond(prompt=prompt, session_id="kinds").decision != "injected"


@pytest.mark.parametrize(("prompt", "key"), [
    ("where are the spare keys?", "keys"),
    ("when are the recycling bins collected?", "bins"),
    ("who owns the billing service?", "billing"),  # a team answers "who"
])
def test_a_memory_holding_the_kind_asked_is_still_whispered(household, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="kinds")
    assert (result.decision, result.node_ids) == ("injected", (household[key].id,))
