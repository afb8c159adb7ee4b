"""Browser fixtures: one headless Debian Chromium per session (Playwright sync API), a signed-in page per test.

Playwright's sync API runs an event loop in this thread, so Django's async-safety check is switched off here
(tech notes §5). Do not mix these fixtures with pytest-playwright's.
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
SCREENS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screens"
PASSWORD = "correct horse battery staple"


# A renderer or browser process that dies under the machine's load is not a finding about Ormah: CI once lost
# a whole run to one "Page.evaluate: Target crashed" in a zoom test. Such a test runs again (at most twice) on
# a fresh page; an assertion failure, a timeout or a JavaScript error is never rerun.
CRASHES = [r"Target crashed", r"Target page, context or browser has been closed", r"Browser has been closed",
           r"Browser closed"]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.get_closest_marker("browser") and not item.get_closest_marker("flaky"):
            item.add_marker(pytest.mark.flaky(reruns=2, only_rerun=CRASHES))


class Chromium:
    """The session's Chromium, launched again if its process died (a crashed browser would fail every later test)."""

    def __init__(self, playwright):
        self._playwright = playwright
        self._browser = None

    def _alive(self):
        if self._browser is None or not self._browser.is_connected():
            self._browser = self._playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        return self._browser

    def new_context(self, **kwargs):
        return self._alive().new_context(**kwargs)

    def close(self) -> None:
        if self._browser is not None and self._browser.is_connected():
            self._browser.close()


# Package scope: Playwright's sync API keeps an event loop running until it stops, which would break
# asyncio.run() in later test packages (the MCP tests).
@pytest.fixture(scope="package")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail("Debian Chromium is required: apt-get install -y chromium chromium-driver")
    from playwright.sync_api import sync_playwright

    SCREENS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        b = Chromium(p)
        yield b
        b.close()


@pytest.fixture
def ui_account(transactional_db, settings):
    from django.contrib.auth import get_user_model

    # Sign-in is tested for real; PBKDF2's million rounds would only add a second to every test.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return get_user_model().objects.create_superuser(username="ormah", email=None, password=PASSWORD)


@pytest.fixture
def new_page(browser, live_server, home, ui_account):
    """A function opening a fresh page (own context) on the live server; pages that failed JS fail the test."""
    contexts, errors = [], []

    def open_page(**context_args):
        # bypass_csp: Playwright evaluates the tests' string predicates (wait_for_function) with eval in the page,
        # which the server's `script-src 'self'` refuses; the pages' own scripts never eval (htmx allowEval off).
        context = browser.new_context(**{"base_url": live_server.url.replace("//localhost:", "//127.0.0.1:"),
                                         "viewport": {"width": 1440, "height": 900}, "bypass_csp": True,
                                         **context_args})
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        _trace(page)
        return page

    yield open_page
    for context in contexts:
        try:
            context.close()
        except Exception:  # a context whose page crashed may refuse to close; the test already failed
            pass
    _wait_for_requests_in_flight()
    assert errors == [], f"JavaScript errors: {errors}"


def _trace(page) -> None:
    """Print the page's answers (but static files), failed requests and console messages: pytest shows a test's printed output only
    when it fails, so a failure in CI says what the page saw (session 23: a 60 s timeout after `u` left no trace)."""
    start = time.monotonic()

    def say(text: str) -> None:
        print(f"[page +{time.monotonic() - start:.2f}s] {text}", flush=True)

    page.on("console", lambda m: say(f"console {m.type}: {m.text}"))
    page.on("requestfailed", lambda r: say(f"request failed: {r.method} {r.url} {r.failure}"))
    page.on("response", lambda r: None if "/static/" in r.url else say(f"HTTP {r.status}: {r.request.method} {r.url}"))


def _wait_for_requests_in_flight(timeout: float = 10.0) -> None:
    """Wait until the live server has answered every request a closed page had sent (the graph page posts its
    positions as it goes). A request still running when the database fixture tears down fails in the server's
    thread, which then formats a traceback while pytest formats the teardown error in this one: on Python 3.11 two
    threads parsing source at once can raise "SystemError: AST constructor recursion depth mismatch" and end the
    whole run with an INTERNALERROR (seen once under load in this session's CI rehearsal). The live server answers
    each request in a thread of its own, named after `process_request_thread`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not any("process_request_thread" in t.name for t in threading.enumerate() if t.is_alive()):
            return
        time.sleep(0.02)


def sign_in(page, next_path: str = "/") -> None:
    """Sign in through the real form and wait for the page behind it."""
    page.goto(next_path)
    page.fill("#id_username", "ormah")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_load_state()


def wait_for_graph(page) -> int:
    page.wait_for_selector("#graph[data-state=ready]")
    return page.evaluate("window.ormahGraph.nodes().length")


def settled_position(page, node_id: str) -> dict:
    """Where Cytoscape draws the node once it stops moving (an animated fit or zoom may still be running)."""
    read = "id => window.ormahGraph.getElementById(id).renderedPosition()"
    pos = page.evaluate(read, node_id)
    for _ in range(50):
        page.wait_for_timeout(100)
        again = page.evaluate(read, node_id)
        if abs(again["x"] - pos["x"]) < 0.5 and abs(again["y"] - pos["y"]) < 0.5:
            return again
        pos = again
    return pos


def click_node(page, node_id: str, *, double: bool = False) -> None:
    """Click a node where Cytoscape drew it (a real mouse click on the canvas)."""
    box = page.locator("#graph").bounding_box()
    pos = settled_position(page, node_id)
    if double:
        page.mouse.dblclick(box["x"] + pos["x"], box["y"] + pos["y"])
    else:
        page.mouse.click(box["x"] + pos["x"], box["y"] + pos["y"])


def shot(page, name: str, **kwargs) -> None:
    page.screenshot(path=str(SCREENS / f"{name}.png"), **kwargs)
