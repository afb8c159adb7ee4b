"""An id a duplicate merge removed: reads and edits answer 404 naming the keeper; feedback lands on the keeper;
undo makes the old id live again."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory import runtime
from memory.domain.enums import EdgeType
from memory.domain.requests import NodePatch
from memory.errors import AmbiguousNodeRef, NodeMerged, NodeNotFound
from memory.models import MergeHistoryRow
from memory.selectors import node_get, node_row_get, node_row_resolve
from memory.services import edge_create, merge_undo, node_forget, node_merge, node_update

WHEN = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)


@pytest.fixture
def pair(mem):
    keep = mem("Ormah stores every memory as a markdown file", auto_link=False)
    gone = mem("Ormah keeps memories in markdown files", auto_link=False)
    merge = node_merge(keep_ref=keep.id, discard_ref=gone.id, now=WHEN)
    return keep, gone, merge


def test_reading_a_merged_id_names_the_keeper(pair):
    keep, gone, merge = pair
    with pytest.raises(NodeMerged) as caught:
        node_row_get(ref=gone.id)
    assert caught.value.message == f"Memory {gone.id} was merged into {keep.id} on 2026-11-20"
    assert caught.value.details == {"removed": gone.id, "merged_into": keep.id, "merged_at": WHEN.isoformat(),
                                    "merge_id": merge.merge_id, "chain": [keep.id], "keeper_live": True}
    assert (caught.value.code, caught.value.http_status, isinstance(caught.value, NodeNotFound)) == (
        "not_found", 404, True)


def test_a_unique_prefix_of_a_merged_id_names_the_keeper_too(pair):
    keep, gone, _ = pair
    with pytest.raises(NodeMerged) as caught:
        node_row_get(ref=gone.id[:8])
    assert caught.value.merged_into == keep.id


@pytest.mark.parametrize("edit", ["show", "update", "forget", "connect"])
def test_edits_by_a_merged_id_are_refused_not_redirected(pair, edit):
    keep, gone, _ = pair
    calls = {
        "show": lambda: node_get(store=runtime.store(), ref=gone.id),
        "update": lambda: node_update(ref=gone.id, patch=NodePatch(content="changed by id")),
        "forget": lambda: node_forget(ref=gone.id),
        "connect": lambda: edge_create(source_ref=gone.id, target_ref=keep.id, edge=EdgeType.RELATED_TO, weight=0.5),
    }
    with pytest.raises(NodeMerged):
        calls[edit]()
    assert node_get(store=runtime.store(), ref=keep.id).content == "Ormah stores every memory as a markdown file"


def test_writes_about_the_content_resolve_to_the_keeper(pair):
    keep, gone, _ = pair
    row, merged_from = node_row_resolve(ref=gone.id[:8])
    assert (row.uid, merged_from) == (keep.id, gone.id)
    assert (node_row_resolve(ref=keep.id)[0].uid, node_row_resolve(ref=keep.id)[1]) == (keep.id, None)


def test_a_chain_of_merges_is_followed_to_the_live_keeper(mem):
    a = mem("The nightly backup copies the memory folder to the NAS", auto_link=False)
    b = mem("Backups of the memory folder go to the NAS every night", auto_link=False)
    c = mem("Every night the memory folder is backed up to the NAS", auto_link=False)
    node_merge(keep_ref=b.id, discard_ref=a.id, now=WHEN)
    node_merge(keep_ref=c.id, discard_ref=b.id, now=WHEN)
    with pytest.raises(NodeMerged) as caught:
        node_row_get(ref=a.id)
    assert (caught.value.merged_into, caught.value.details["chain"]) == (c.id, [b.id, c.id])
    assert node_row_resolve(ref=a.id)[0].uid == c.id


def test_a_forgotten_keeper_is_not_found_for_feedback_either(pair):
    keep, gone, _ = pair
    node_forget(ref=keep.id)
    with pytest.raises(NodeMerged) as caught:
        node_row_resolve(ref=gone.id)
    assert caught.value.message == (f"Memory {gone.id} was merged into {keep.id} on 2026-11-20; "
                                    f"{keep.id} no longer exists")
    assert caught.value.details["keeper_live"] is False


def test_a_loop_in_the_history_ends(pair):
    keep, gone, _ = pair
    node_forget(ref=keep.id)
    row = MergeHistoryRow.objects.get()
    MergeHistoryRow.objects.create(  # a hand-made ledger row pointing back (no merge service writes one)
        merge_id="0" * 36, kept_uid=gone.id, removed_uid=keep.id, kept_path="x", removed_path="y", kept_before="",
        removed_before="", kept_after_hash="", merged_at=row.merged_at)
    with pytest.raises(NodeMerged) as caught:
        node_row_get(ref=gone.id)
    assert caught.value.details["chain"] == [keep.id]


def test_undo_makes_the_old_id_live_and_stops_the_redirect(pair):
    keep, gone, merge = pair
    merge_undo(ref=merge.merge_id)
    assert node_row_get(ref=gone.id).uid == gone.id
    assert node_row_resolve(ref=gone.id) == (node_row_get(ref=gone.id), None)


def test_an_unknown_id_is_still_plain_not_found(pair):
    with pytest.raises(NodeNotFound) as caught:
        node_row_get(ref="ffffffff")
    assert type(caught.value) is NodeNotFound


def test_a_prefix_shared_by_two_merged_ids_is_ambiguous(db, home):
    for uid in ("abcd0001-0000-4000-8000-000000000000", "abcd0002-0000-4000-8000-000000000000"):
        MergeHistoryRow.objects.create(
            merge_id=uid, kept_uid="ffff0000-0000-4000-8000-000000000000", removed_uid=uid, kept_path="x",
            removed_path="y", kept_before="", removed_before="", kept_after_hash="", merged_at=WHEN)
    with pytest.raises(AmbiguousNodeRef):
        node_row_get(ref="abcd")


# ---------------------------------------------------------------------------
# Through the API
# ---------------------------------------------------------------------------

@pytest.fixture
def client(home, db, settings):
    from django.test import Client

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": "merged-ids-token"}
    return Client(headers={"Authorization": "Bearer merged-ids-token"})


@pytest.mark.parametrize(("method", "path", "body"), [
    ("get", "/api/agent/nodes/{gone}?use=false", None),
    ("get", "/api/agent/nodes/{gone}", None),
    ("patch", "/api/agent/nodes/{gone}", {"content": "changed by id"}),
    ("delete", "/api/agent/nodes/{gone}", None),
    ("post", "/api/agent/connect", {"source_id": "{gone}", "target_id": "{keep}", "edge": "related_to"}),
])
def test_the_api_answers_404_naming_the_keeper(pair, client, method, path, body):
    keep, gone, merge = pair
    fill = {"gone": gone.id[:8], "keep": keep.id}
    if body is not None:
        body = {k: v.format(**fill) for k, v in body.items()}
        response = getattr(client, method)(path.format(**fill), body, content_type="application/json")
    else:
        response = getattr(client, method)(path.format(**fill))
    assert response.status_code == 404
    assert response.json() == {
        "error": "not_found", "message": f"Memory {gone.id} was merged into {keep.id} on 2026-11-20",
        "details": {"removed": gone.id, "merged_into": keep.id, "merged_at": WHEN.isoformat(),
                    "merge_id": merge.merge_id, "chain": [keep.id], "keeper_live": True}}


def test_api_feedback_on_a_merged_id_lands_on_the_keeper(pair, client):
    keep, gone, _ = pair
    response = client.post("/api/agent/feedback", {"node_id": gone.id, "signal": 1}, content_type="application/json")
    assert response.status_code == 200
    assert (response.json()["node_id"], response.json()["merged_from"], response.json()["use_confirmed"]) == (
        keep.id, gone.id, True)


def test_the_cli_prints_the_same_message_and_fails(pair, client, home, monkeypatch, capsys):
    import sqlite3

    from django.core.signals import request_finished, request_started
    from django.db import close_old_connections

    from ormah_site.cli import _run

    keep, gone, _ = pair
    marker = home / "index.sqlite3"  # `ormah` checks the home is initialised; the index itself is the test DB
    with sqlite3.connect(marker) as conn:
        conn.execute("CREATE TABLE django_migrations (id INTEGER)")
    monkeypatch.setenv("ORMAH_HOME", str(home))
    monkeypatch.delenv("ORMAH_DB_PATH", raising=False)
    monkeypatch.setenv("ORMAH_URL", "http://127.0.0.1:9")  # nothing listens: the command runs the API in-process
    monkeypatch.setenv("ORMAH_API_TOKEN", "merged-ids-token")
    # The in-process API is Django's bare WSGI handler: keep it from closing the test's connection (inside the
    # test's transaction, as django.test.Client does), which PostgreSQL would lose.
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        assert _run(["show", gone.id[:8]]) == 1
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)
    assert capsys.readouterr().err == f"ormah: Memory {gone.id} was merged into {keep.id} on 2026-11-20\n"
