"""Path traversal through ids, titles (slugs), spaces, tags, static and docs URLs: nothing outside the memory
folder is read or written, and every answer is a clean 4xx in the error shape.

Archives whose members climb out (`../evil.md`, absolute paths, symlinks) are refused by `ormah import` before
anything is written: tests/portability/test_bad_input.py.
"""

from __future__ import annotations

import os
from urllib.parse import quote

import pytest
from django.test import Client

from memory import runtime

TRAVERSALS = [
    "../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%2e%2e%2f%2e%2e%2fetc%2fpasswd", "....//....//etc/passwd",
    "/etc/passwd", "..\\..\\windows\\win.ini", "abcd1234/../../../etc/passwd", "abcd1234%00.md", "*", "abcd*",
    "?", "[a-f]*", "~", "$HOME", ".", "..", "a" * 5000, "abcd1234\n", "ABCD' OR '1'='1",
]
ROUTES = [
    ("get", "/api/agent/nodes/{}"), ("patch", "/api/agent/nodes/{}"), ("delete", "/api/agent/nodes/{}"),
    ("post", "/api/agent/nodes/{}/restore"), ("post", "/api/agent/nodes/{}/outdated"),
    ("post", "/api/agent/merges/{}/undo"), ("post", "/api/agent/proposals/{}"),
    ("post", "/api/admin/tasks/{}/run"),
]


def _outside_untouched(home, before):
    assert sorted(p.name for p in home.parent.iterdir()) == before


@pytest.fixture
def node(api):
    return api.post("/api/agent/remember", {"content": "A memory the traversals aim past"}).json()["node"]


@pytest.mark.parametrize("method, route", ROUTES, ids=[f"{m} {r}" for m, r in ROUTES])
def test_hostile_ids_in_api_paths_are_clean_4xx(api, home, node, method, route):
    before = sorted(p.name for p in home.parent.iterdir())
    for ref in TRAVERSALS:
        path = route.format(ref if "%" in ref else quote(ref, safe=""))
        body = {"content": "x"} if method == "patch" else {"action": "approve"} if "proposals" in route else {}
        response = getattr(api, method)(path) if method in ("get", "delete") else getattr(api, method)(path, body)
        assert 400 <= response.status_code < 500, (ref, response.status_code, response.content[:300])
        if response["Content-Type"].startswith("application/json"):
            assert set(response.json()) == {"error", "message", "details"}, (ref, response.content)
        assert b"root:" not in response.content
    _outside_untouched(home, before)
    assert api.get(f"/api/agent/nodes/{node['id']}").status_code == 200


@pytest.mark.parametrize("title", [
    "../../../../etc/passwd", "..\\..\\boot.ini", "/absolute/path", "nodes/../deleted/x", "．．／．．／etc",
    "CON", "NUL.md", ".hidden", "-rf --no-preserve-root /", "a/" * 150, "\u202etxt.exe",
])
def test_hostile_titles_become_plain_file_names_inside_nodes(api, home, title):
    response = api.post("/api/agent/remember", {"content": "Where does this file land?", "title": title})
    assert response.status_code == 201, response.content
    node = response.json()["node"]
    path = runtime.store().path_for(node["id"])
    assert path.parent == home / "memory" / "nodes"
    assert path.name.startswith("fact_") and path.name.endswith(f"_{node['short_id']}.md")
    assert all(c.isalnum() or c in "_-." for c in path.name) and ".." not in path.name and len(path.name) < 80
    assert sorted(os.listdir(home / "memory")) == ["nodes"]


@pytest.mark.parametrize("field, value", [
    ("title", "evil\x00title"), ("content", "evil\x00content"), ("space", "../../etc"), ("space", "a\\b"),
    ("space", "x\x00y"), ("type", "../fact"), ("tier", "../core"), ("tags", ["../x"]), ("tags", ["a/b"]),
    ("source", "agent\x00x"), ("session_id", "s\x00x"),
])
def test_nul_bytes_and_slashes_in_fields_are_refused_with_422(api, home, field, value):
    response = api.post("/api/agent/remember", {"content": "Valid content", field: value})
    assert response.status_code == 422, response.content
    assert response.json()["error"] == "validation_failed"
    assert not (home / "memory" / "nodes").exists() or os.listdir(home / "memory" / "nodes") == []


@pytest.mark.parametrize("url", [
    "/static/../manage.py", "/static/..%2fmanage.py", "/static/%2e%2e/%2e%2e/etc/passwd",
    "/static/ui/../../ormah_site/settings.py", "/static/..%5c..%5cmanage.py", "/static//etc/passwd",
    "/static/%2fetc%2fpasswd", "/static/ui/%2e%2e%2f%2e%2e%2fpyproject.toml",
])
def test_static_files_never_leave_the_static_folders(db, url):
    response = Client(raise_request_exception=False).get(url)
    assert response.status_code in (400, 404), url  # 400: Django's SuspiciousFileOperation
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert b"root:" not in body and b"SECRET_KEY" not in body and b"[project]" not in body


@pytest.mark.parametrize("name", ["..%2F..%2Fsettings.py", "../swagger-ui.css", "%2e%2e%2fapi.py", "/etc/passwd"])
def test_docs_assets_serve_only_the_bundled_files(api, name):
    response = api.get(f"/api/docs/assets/{name}")
    assert response.status_code == 404
    assert b"import" not in (b"".join(response.streaming_content) if response.streaming else response.content)


@pytest.mark.parametrize("ref", ["../../etc/passwd", "..%2F..%2Fetc%2Fpasswd", "%00", "abcd1234%2F..%2F.."])
def test_hostile_ids_in_ui_urls_never_fail_or_leak(ui_client, ref):
    for path in (f"/nodes/{ref}/", f"/nodes/{ref}/edit/", f"/proposals/node/{ref}/", f"/graph/nodes/{ref}/"):
        response = ui_client.get(path)
        assert response.status_code < 500, (path, response.status_code)  # 4xx, or an empty proposal list
        assert b"root:" not in response.content


@pytest.fixture
def ui_client(home, db, settings):
    from django.contrib.auth import get_user_model

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    user = get_user_model().objects.create_superuser(username="ormah", email=None, password="pw")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def test_transcript_ingest_reads_only_absolute_jsonl_files(api, tmp_path):
    for path in ("/etc/passwd", "../../etc/passwd", "relative.jsonl", str(tmp_path / "missing.jsonl"),
                 "/etc/passwd\x00.jsonl"):
        response = api.post("/api/agent/ingest/transcript", {"transcript_path": path})
        assert 400 <= response.status_code < 500, (path, response.status_code, response.content)
        assert b"root:" not in response.content
