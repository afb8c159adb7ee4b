"""Errors a person meets in the middle of a screen (headless Chromium): the answer says what happened in the message
area and the screen stays as it was, never a blank, a silent click or Django's bare error page inside a panel."""

from __future__ import annotations

import pytest
from django.db import connection

from memory.services import self_ensure
from tests.browser.conftest import shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture
def memory_page(new_page, mem):
    self_ensure(name="Robin")
    node = mem("The staging database is restored from the nightly backup every Monday", title="Staging restores",
               auto_link=False)
    page = new_page()
    sign_in(page, f"/nodes/{node.id}/")
    page.wait_for_selector("#node-title")
    return page, node


def test_a_server_error_says_so_and_keeps_the_screen(memory_page):
    page, node = memory_page
    with connection.cursor() as cursor:  # a broken index: every read of the memory fails with a real 500
        cursor.execute("ALTER TABLE memory_noderow RENAME TO memory_noderow_away")
    try:
        with page.expect_response(lambda r: r.url.endswith("/edit/")) as answer:
            page.click("#panel button:has-text('Edit')")
        assert answer.value.status == 500
        page.wait_for_selector("#toast.shown")
    finally:
        with connection.cursor() as cursor:
            cursor.execute("ALTER TABLE memory_noderow_away RENAME TO memory_noderow")
    toast = page.inner_text("#toast")
    assert "error (500)" in toast and "Reload" in toast, toast
    assert page.inner_text("#node-title") == node.title
    shot(page, "errors-server-error")


def test_a_server_that_does_not_answer_is_named(memory_page):
    page, node = memory_page
    page.context.set_offline(True)
    try:
        page.click("#panel button:has-text('Edit')")
        page.wait_for_selector("#toast.shown")
    finally:
        page.context.set_offline(False)
    assert "did not answer" in page.inner_text("#toast")
    assert page.inner_text("#node-title") == node.title
