"""Every page works under the server's Content-Security-Policy (the other browser tests bypass it so that
Playwright may evaluate their string predicates): no CSP violation and no script error on any screen."""

from __future__ import annotations

import pytest

from tests.browser.conftest import sign_in

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGES = ["/", "/inbox/", "/inbox/?view=learned", "/jobs/", "/whisper/", "/stats/", "/search/?q=deploy"]


def test_every_screen_runs_under_the_content_security_policy(new_page, mem):
    node = mem("The billing service deploys on Tuesdays after sign-off", auto_link=False)
    page = new_page(bypass_csp=False)
    violations: list[str] = []
    page.on("console", lambda msg: violations.append(msg.text) if "Content Security Policy" in msg.text else None)
    sign_in(page, "/")
    page.wait_for_selector("#graph[data-state=ready]")
    for path in [*PAGES, f"/nodes/{node.id}/", f"/nodes/{node.id}/edit/", f"/nodes/{node.id}/connect/"]:
        response = page.goto(path)
        assert response is not None and response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        page.wait_for_load_state("networkidle")
    # The graph's search is an htmx swap plus the graph's own script: type into it under the policy too.
    page.goto("/")
    page.wait_for_selector("#graph[data-state=ready]")
    page.locator("#q").fill("billing")
    page.wait_for_load_state("networkidle")
    assert violations == []
