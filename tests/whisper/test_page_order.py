"""Whisper's weighing of long pages (whisper.stages.retrieve.page_probability): a page the prompt names gains
log-odds; an imported documentation page and a project's own short note for the tasks a user types while working
(session 10's weighing down of a page from outside the project went in session 22's audit). Texts written for this
test."""

from __future__ import annotations

import math

import pytest

from tests.postgres import sqlite_only
from whisper.services import whisper_respond
from whisper.stages.retrieve import NAME_WORDS, NAMED_PAGE_LIFT, names_page, page_probability

pytestmark = pytest.mark.usefixtures("small_store_gate")  # conftest: the gate at 0.30, not the default

SQLITE_SCORES = sqlite_only(reason="the scores it pins are SQLite's (FTS5 BM25 in recall's probability); PostgreSQL's "
                                   "full-text ranks differ; page_probability itself is tested on both")

SECTIONS = [
    ("Installation", "Install the runner with pip and download the browsers it drives. The first run fetches "
     "Chromium, Firefox and WebKit builds into a cache folder; later runs reuse them."),
    ("Writing tests", "A test receives a page fixture, navigates to a URL and asserts on what it sees. Locators "
     "find elements by role, text or label and wait for them automatically, so tests do not sleep."),
    ("End-to-end testing", "End-to-end tests drive a real browser against a running application: they click, "
     "type and submit forms as a user would, then check the page that results. Keep each test independent."),
    ("Fixtures", "Fixtures set up what a test needs and tear it down afterwards: a browser context per test, a "
     "logged-in user, a seeded database. Scope a fixture to the session when it is expensive to build."),
    ("Assertions", "Web-first assertions retry until the condition holds or the timeout passes: expect a locator "
     "to be visible, to have a text, to have a count. Prefer them to reading values and comparing by hand."),
    ("Tracing", "Record a trace on the first retry to see every action, network request and console message of "
     "a failed test. Open it in the trace viewer to step through the run frame by frame."),
    ("Parallel runs", "Tests run in parallel worker processes by default. Each worker gets its own browser; tests "
     "in one file run in order unless marked otherwise. Shard a large suite across machines in CI."),
    ("Continuous integration", "Install the browsers' system dependencies in the CI image, cache the browser "
     "downloads, and upload the HTML report and traces as artifacts when a job fails."),
    ("Debugging", "Run headed with a slow-motion delay to watch a test, pause on a breakpoint with the inspector, "
     "or print the accessibility tree of the page to see what a locator can reach."),
    ("Network", "Route requests to stub an API, wait for a response matching a URL, or record and replay network "
     "traffic from a HAR file so a test does not depend on a live backend."),
    ("Screenshots", "Take a screenshot of the page or of one element, or compare against a stored image with a "
     "pixel tolerance for visual regression checks; update the stored images on purpose only."),
    ("Authentication", "Log in once in a setup project, save the storage state to a file, and start every other "
     "test from it so that no test repeats the login form."),
]
PAGE = "# Browser testing guide\n\n" + "\n\n".join(f"## {h}\n\n{t} " * 3 for h, t in SECTIONS)
NOTE = ("End-to-end tests of the bakery app's pages live in tests/e2e: write a new end-to-end test with the "
        "seeded_shop fixture, then run make e2e.")
PROMPT = "write an end-to-end test for the new export page"


@pytest.fixture
def store(mem):
    return {"page": mem(PAGE, type="fact", space="docs", title="Browser testing guide", auto_link=False),
            "note": mem(NOTE, type="fact", space="bakery", auto_link=False)}


@SQLITE_SCORES
def test_the_projects_note_is_whispered_beside_an_imported_page(store):
    # Recall ranks the note first already (probability 0.66 against 0.27); without the page's discount the note's
    # margin over it is too small for the gate (log-odds 0.25 against 0.40) and whisper stays silent.
    result = whisper_respond(prompt=PROMPT, session_id="s1", space="bakery")
    assert (result.decision, result.node_ids) == ("injected", (store["note"].id,))


# A library's imported README (a made-up library, text written for this test) and a project's own note: a question
# about the library asked while working in the project must still get the library's page.
LIBRARY_SECTIONS = [
    ("Installation", "Install quillmark with pip. It needs Python 3.10 or newer and has no compiled extensions, "
     "so it installs the same way on Linux, macOS and Windows."),
    ("Uploading", "An Uploader sends files to a bucket in parts of 8 MB. Give it the bucket's URL and a token; "
     "upload() returns the object's key once every part has been acknowledged by the server."),
    ("Retries", "When a connection drops in the middle of an upload, quillmark retries the part that failed by "
     "itself, up to five times with a backoff that doubles each time, then raises UploadInterrupted carrying the "
     "parts already stored, so a later call can resume from there instead of sending the file again."),
    ("Progress", "Pass on_progress to upload() to receive the bytes sent so far and the total; the callback runs "
     "in the uploading thread, so keep it short or hand the numbers to a queue."),
    ("Checksums", "Every part is sent with its CRC32C and the server rejects a part whose checksum differs; the "
     "final object is verified against the checksum of the whole file before upload() returns."),
    ("Logging", "quillmark logs through the standard logging module under the quillmark logger; nothing is printed "
     "unless the application configures a handler for it."),
]
LIBRARY_PAGE = "# quillmark\n\n" + "\n\n".join(f"## {h}\n\n{t} " * 8 for h, t in LIBRARY_SECTIONS)
PROJECT_NOTE = "Bakery app photo uploads go to the shop-photos bucket; the upload worker runs every five minutes."
LIBRARY_PROMPT = "with quillmark, what happens when the wifi cuts out while a photo is uploading?"


@pytest.mark.parametrize(("prompt", "title", "expected"), [
    ("does httpx-sse reconnect by itself?", "httpx-sse: README and changelog", True),
    ("read .env into a dict with dotenv", "python-dotenv: README and changelog", True),  # "python-" affix
    ("render it with markdown-it", "markdown-it-py: README", True),  # "-py" affix
    ("record the flow with playwright-cli", "Playwright CLI: test generation", True),  # the title's lead
    ("write a Playwright login test", "Playwright CLI: test generation", False),  # one word of the lead
    ("write a browser test for the export page", "Browser testing guide", False),  # no colon: the whole title
    ("how do I reconnect the stream?", "httpx-sse: README and changelog", False),
])
def test_names_page(prompt, title, expected):
    words = set(NAME_WORDS.findall(prompt.lower()))
    assert names_page(words, title=title) is expected


def test_a_page_the_prompt_names_gains_log_odds():
    lifted = 1 / (1 + math.exp(-NAMED_PAGE_LIFT))
    assert page_probability(0.5, chars=9000, named=True) == pytest.approx(lifted)
    assert page_probability(0.5, chars=900, named=True) == 0.5  # a note: unchanged


OTHER_LIBRARY = "# ferrylink\n\n" + ("ferrylink moves files between machines over SSH. It resumes a broken transfer from "
                                      "the last acknowledged block, verifies every block with a hash, and reports "
                                      "progress through a callback. ") * 20
BAKERY_TOPICS = ["the upload worker", "photo resizing", "the CSV export", "order emails", "the login form",
                 "the stock counter", "price rules", "the nightly backup", "the search box", "delivery slots"]
BAKERY_FACTS = ["runs every five minutes", "retries twice before it gives up", "logs to the bakery channel",
                "was rewritten in May", "uses the shared database", "is owned by Priya"]


@SQLITE_SCORES
def test_a_page_the_prompt_names_is_whispered_for_a_task_in_a_project(mem):
    page = mem(LIBRARY_PAGE, type="fact", space="docs", title="quillmark: README", tags=["docs", "quillmark"],
               auto_link=False)
    mem(OTHER_LIBRARY, type="fact", space="docs", title="ferrylink: README", tags=["docs"], auto_link=False)
    mem(PAGE, type="fact", space="docs", title="Browser testing guide", tags=["docs"], auto_link=False)
    mem(PROJECT_NOTE, type="fact", space="bakery", auto_link=False)
    for i, topic in enumerate(BAKERY_TOPICS):
        for j in range(3):
            mem(f"In the bakery app, {topic} {BAKERY_FACTS[(i + j) % len(BAKERY_FACTS)]}.", type="fact",
                space="bakery", auto_link=False)
    # Recall: the page 0.38 among 34 memories; its gate log-odds 0.27 against 0.40 without the lift, 0.67 with it.
    result = whisper_respond(prompt="make the export use quillmark", session_id="s1", space="bakery")
    assert (result.decision, result.node_ids) == ("injected", (page.id,))


@SQLITE_SCORES
def test_a_library_page_the_prompt_names_is_whispered_inside_a_project(mem):
    page = mem(LIBRARY_PAGE, type="fact", space="docs", title="quillmark: README", tags=["docs", "quillmark"],
               auto_link=False)
    mem(PROJECT_NOTE, type="fact", space="bakery", auto_link=False)
    # Recall: the page 0.70 (9.7 KB), the note 0.16. Weighed down as a page from outside the project, the page's
    # gate log-odds is -0.14 against 0.40 and whisper stays silent; the prompt names it, so it keeps 0.70 (1.51).
    result = whisper_respond(prompt=LIBRARY_PROMPT, session_id="s1", space="bakery")
    assert (result.decision, result.node_ids) == ("injected", (page.id,))
