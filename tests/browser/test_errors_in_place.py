"""Errors a person meets in the middle of a screen (headless Chromium): the answer says what happened in the message
area and the screen stays as it was, never a blank, a silent click or Django's bare error page inside a panel."""

from __future__ import annotations

import pytest
from django.db import connection

from memory import runtime
from memory.services import self_ensure
from tests.browser.conftest import PASSWORD, shot, sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def tier_of(uid: str) -> str:
    store = runtime.store()
    return store.read(store.path_for(uid))[0].tier.value


@pytest.fixture
def memory_page(new_page, mem):
    self_ensure(name="Robin")
    node = mem("The staging database is restored from the nightly backup every Monday", title="Staging restores",
               auto_link=False)
    page = new_page()
    sign_in(page, f"/nodes/{node.id}/")
    page.wait_for_selector("#node-title")
    return page, node


def signed_in_again_elsewhere(page):
    """Another tab of the same browser that signs out and in again: the session gets a new CSRF token, so the token
    `page` holds is stale. Returns that tab."""
    other = page.context.new_page()
    other.goto("/")
    other.click("button:has-text('Sign out')")
    other.wait_for_selector("#id_username")
    other.fill("#id_username", "ormah")
    other.fill("#id_password", PASSWORD)
    other.click("button[type=submit]")
    other.wait_for_load_state()
    return other


def test_signing_in_again_in_another_tab_leaves_a_readable_message_not_a_csrf_page(memory_page):
    page, node = memory_page
    other = signed_in_again_elsewhere(page)
    with page.expect_response(lambda r: r.url.endswith("/tier/")) as answer:
        page.click("form[action$='/tier/'] button:has-text('Archive')")
    assert answer.value.status == 403
    page.wait_for_selector("#toast.shown")
    toast = page.inner_text("#toast")
    assert "out of date" in toast and "Reload" in toast, toast
    assert "CSRF verification failed" not in page.inner_text("body")
    assert page.inner_text("#node-title") == node.title  # the panel was left as it was
    assert tier_of(node.id) == "working"  # and nothing changed
    shot(page, "errors-stale-page")
    page.click("#toast a:has-text('Reload')")
    page.wait_for_selector("#node-title")
    page.click("form[action$='/tier/'] button:has-text('Archive')")
    page.wait_for_selector("#panel .notice")
    assert tier_of(node.id) == "archival"


def test_signing_out_from_a_stale_page_just_signs_out(memory_page):
    page, node = memory_page
    other = signed_in_again_elsewhere(page)
    with page.expect_response(lambda r: r.url.endswith("/logout/")) as answer:
        page.click("button:has-text('Sign out')")
    assert answer.value.status == 302  # it said "This page is out of date" (403)
    page.wait_for_selector("#id_username")
    assert "out of date" not in page.inner_text("body")
    other.goto(f"/nodes/{node.id}/")  # the session is over in every tab
    other.wait_for_selector("#id_username")


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


def test_an_action_sent_after_the_session_ended_is_said_to_be_not_done(memory_page):
    page, node = memory_page
    page.context.clear_cookies(name="sessionid")
    page.click("form[action$='/tier/'] button:has-text('Archive')")
    page.wait_for_url("**/login/?next=*")
    page.wait_for_selector("#id_username")
    assert "was not done" in page.inner_text("main")
    assert tier_of(node.id) == "working"
    page.fill("#id_username", "ormah")
    page.fill("#id_password", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_selector("#node-title")  # back on the memory's page, to do it again
    assert page.url.endswith(f"/nodes/{node.id}/")
