"""Session 18's answer-slot checks (docs/whisper.md, "Session 18: repairs of the focus rules"): a question asking for
a version keeps a memory only if it names a version (whisper.stages.focus, `no_version`). The identifier kind (a
question asking for a number, id, serial, IBAN or account number kept a memory only if it held an identifier) went in
session 21's audit (docs/whisper.md, "Rules audited on fresh batches (session 21)"); the answers its repairs kept
are still whispered, below. Each near miss below is whispered by main 4b24001 (checked); the store
and prompts were written for these tests."""

from __future__ import annotations

import pytest

from whisper.services import whisper_respond
from whisper.stages.focus import holds_version, no_version, off_focus


# ---- item 9: the version asked

@pytest.mark.parametrize(("prompt", "text", "dropped"), [
    ("which version of lxml do we pin?", "lxml\nlxml is an optional extra for files over 50 MB.", True),
    ("what's the minimum lxml version the fast extra needs", "lxml\nAn optional extra, off by default.", True),
    ("which version of lxml do we pin?", "lxml\nPinned to lxml 5.2 since the wheel broke.", False),
    ("which version of react do we pin?", "Frontend\nWe pin react@18 until the router catches up.", False),
    ("which node version does loafbook build with", "Loafbook\nBuilds on Node 20 with pnpm.", False),
    ("which node version does loafbook build with", "Loafbook\nBuilds on Node LTS with 4 workers.", True),
    ("what changed in the new version of lxml", "lxml\nAn optional extra, off by default.", False),  # no version asked
    ("is lxml optional?", "lxml\nAn optional extra, off by default.", False),
])
def test_a_version_question_needs_a_version(prompt, text, dropped):
    assert no_version(prompt, text) is dropped


@pytest.mark.parametrize(("text", "holds"), [
    ("Python 3.12", True), ("tag v3", True), ("django==5", True), ("we pin react@18", True),
    ("pinned to version 2", True), ("an optional extra for files over 50 MB", False),
])
def test_holds_version(text, holds):
    assert holds_version(text) is holds


def test_off_focus_names_the_missing_version():
    assert off_focus("which version of lxml do we pin?", title="lxml optional",
                     content="lxml is an optional extra (`gpxkit[fast]`) for files over 50 MB.",
                     node_type="decision") == "version: none held"


# ---- end to end: the real store, embedder and recall

@pytest.fixture
def store(mem):
    return {
        "bike": mem("Bought an Urban Arrow e-cargo bike in March 2026 at the shop in Zeist, mostly for the school run "
                    "and big grocery trips.", title="Cargo bike", type="event", tags=["bike"], auto_link=False),
        "account": mem("The tennis club banks with Triodos: current account NL12 TRIO 0198 7654 32; the treasurer "
                       "pays the court rent from it.", title="Tennis club bank account", tags=["tennis club"],
                       auto_link=False),
        "extra": mem("gpxkit parses with the standard library by default; lxml is an optional extra (`gpxkit[fast]`) "
                     "for GPX files over 50 MB.", title="lxml optional", type="decision", tags=["gpxkit"],
                     auto_link=False),
    }


@pytest.mark.parametrize("prompt", [
    "which version of lxml does the gpxkit fast extra pin?",
])
def test_the_near_miss_stays_silent(store, prompt):
    assert whisper_respond(prompt=prompt, session_id="slots").node_ids == ()


def test_the_identifier_is_whispered(store):
    result = whisper_respond(prompt="what's the IBAN of the tennis club's bank account", session_id="slots")
    assert store["account"].id in result.node_ids


# ---- review1 (session 18): right answers these checks silenced

@pytest.mark.parametrize("text", [
    "The app's OAuth client id is 7c9e6679-7425-40de-944b-e07fc1f90ae7.",  # a UUID in lower case
    "API key id: ak_9f3e2b71c04d",                                          # a lower-case token with digits
])
def test_an_identifier_in_lower_case_is_held(text):
    assert off_focus("what's the client id the app uses?", title="OAuth", content=text) is None


@pytest.mark.parametrize(("prompt", "text"), [
    ("what's the version policy for the API?", "Breaking changes bump the major; old majors live 12 months."),
    ("which version control do we use?", "We use git with trunk-based development on GitHub."),
    ("what is our versioning scheme", "Calendar versioning: year and month of the release."),
])
def test_a_question_on_versioning_asks_no_version(prompt, text):
    assert off_focus(prompt, title="Releases", content=text) is None


@pytest.mark.parametrize(("prompt", "text"), [
    ("what is my apple id?", "My Apple ID is jan.devries@icloud.com."),  # an e-mail address is the id
    ("what's my user id on the forum?", "Forum: my username is jdoe."),   # a value after an id's label
    ("what's my login for the club site?", "Club site login: jdevries, password in the manager."),
    ("what's the client id for the staging app?", "Staging app: client id staging-web, secret in the vault."),  # a slug
])
def test_an_identifier_written_as_an_address_or_a_labelled_value_is_held(prompt, text):
    assert off_focus(prompt, title="Accounts", content=text) is None
