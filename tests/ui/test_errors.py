"""Error answers the whole UI shares: a stale CSRF token (the session changed since the page loaded)."""

from __future__ import annotations

from django.urls import reverse

from memory.services import self_ensure

STALE = "This page is out of date"


def _stale_post(client, path: str, **headers):
    client.get("/stats/")  # sets the csrftoken cookie; the header below is not its token
    return client.post(path, {"tier": "archival"}, HTTP_X_CSRFTOKEN="x" * 32, **headers)


def test_a_stale_htmx_request_gets_the_message_in_the_message_area(ui):
    self_node = self_ensure(name="Robin")
    answer = _stale_post(ui, reverse("ui:node-tier", kwargs={"uid": self_node.id}), HTTP_HX_REQUEST="true",
                         HTTP_HX_CURRENT_URL="http://testserver/inbox/?view=decided")
    assert answer.status_code == 403
    assert answer["HX-Retarget"] == "#toast" and answer["HX-Reswap"] == "outerHTML"
    body = answer.content.decode()
    assert STALE in body and 'href="/inbox/?view=decided"' in body and "CSRF verification failed" not in body


def test_a_stale_form_gets_a_page_that_leads_back_only_to_this_site(ui):
    self_node = self_ensure(name="Robin")
    path = reverse("ui:node-tier", kwargs={"uid": self_node.id})
    answer = _stale_post(ui, path, HTTP_REFERER=f"http://testserver/nodes/{self_node.id}/")
    assert answer.status_code == 403 and STALE in answer.content.decode()
    assert f'href="/nodes/{self_node.id}/"' in answer.content.decode()
    elsewhere = _stale_post(ui, path, HTTP_REFERER="https://evil.example/phish")
    assert "evil.example" not in elsewhere.content.decode() and 'href="/"' in elsewhere.content.decode()
