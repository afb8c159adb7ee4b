"""A query parameter a route does not take is a 422 that names it, on every route; the ones it takes still work.

django-ninja drops the names it does not know, so before this `GET /api/agent/nodes?type=fact` (for `types`)
listed every memory as if no filter were asked for.
"""

from __future__ import annotations

import re

import pytest

from ormah_site.api import api as ninja_api


def _operations() -> list[tuple[str, str]]:
    schema = ninja_api.get_openapi_schema(path_params={})
    return [(method, re.sub(r"\{\w+\}", "abcd1234", path)) for path, ops in schema["paths"].items() for method in ops]


@pytest.mark.parametrize("method,path", _operations())
def test_every_route_refuses_a_query_parameter_it_does_not_take(api, method, path):
    response = getattr(api.client, method)(f"{path}?no_such_filter=1", **(
        {} if method == "get" else {"data": "{}", "content_type": "application/json"}))
    assert response.status_code == 422, response.content
    body = response.json()
    assert body["error"] == "validation_failed"
    assert body["message"].startswith("unknown query parameter no_such_filter")
    assert body["details"]["unknown"] == ["no_such_filter"]


def test_a_misspelt_filter_no_longer_lists_everything(api):
    api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays", "type": "procedure"})
    api.post("/api/agent/remember", {"content": "The staging database is Postgres 16"})
    response = api.get("/api/agent/nodes", type="procedure")
    assert response.status_code == 422
    assert "types" in response.json()["details"]["allowed"]
    listed = api.get("/api/agent/nodes", types="procedure").json()["results"]
    assert [r["content"] for r in listed] == ["Deploys happen on Tuesdays"]


def test_the_declared_scalar_parameters_still_pass(api):
    node = api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays"}).json()["node"]
    assert api.get(f"/api/agent/nodes/{node['id']}", use="false").status_code == 200
    again = api.client.post("/api/agent/remember?if_exists=return", {"content": "Deploys happen on Tuesdays"},
                            content_type="application/json")
    assert again.status_code in (200, 201) and again.json()["node"]["id"] == node["id"]
    assert api.get("/api/agent/self", space="billing", limit=5).status_code != 422  # 404: no self node here
    assert api.get("/api/agent/evidence", q="deploys", limit=5).status_code == 200


def test_the_schema_shows_no_parameter_of_the_check():
    schema = ninja_api.get_openapi_schema(path_params={})
    names = {p["name"] for ops in schema["paths"].values() for op in ops.values() for p in op.get("parameters", [])}
    assert "known" not in names and "no_such_filter" not in names
