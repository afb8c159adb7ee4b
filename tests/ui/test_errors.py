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


def _signed_in(client) -> bool:
    return client.get("/stats/").status_code == 200


def test_a_sign_out_from_a_stale_page_of_this_site_signs_out(ui):
    ui.get("/stats/")  # sets the csrftoken cookie; the form's token below is a stale page's
    answer = ui.post(reverse("logout"), {"csrfmiddlewaretoken": "x" * 32}, HTTP_ORIGIN="http://testserver")
    assert answer.status_code == 302 and answer["Location"] == reverse("login")  # it was 403 "out of date"
    assert not _signed_in(ui)


def test_a_sign_out_from_another_site_or_without_an_origin_leads_to_a_fresh_sign_out(ui):
    for headers in ({"HTTP_ORIGIN": "https://evil.example"}, {"HTTP_ORIGIN": "http://testserver:9999"}, {}):
        answer = ui.post(reverse("logout"), {"csrfmiddlewaretoken": "x" * 32}, **headers)
        assert answer.status_code == 403, headers
        assert _signed_in(ui), headers  # not signed out by a page Ormah cannot vouch for
        body = answer.content.decode()
        assert "still signed in" in body and f'action="{reverse("logout")}"' in body
    token = ui.cookies["csrftoken"].value  # the page's own Sign out carries a fresh token: it works
    assert ui.post(reverse("logout"), {"csrfmiddlewaretoken": token}).status_code == 302
    assert not _signed_in(ui)
