"""The index's own disk full or read-only under a running server: writes must answer 507, reads must not fail.

SQLite's "database or disk is full" and "attempt to write a readonly database" reached the API's catch-all as 500
internal_error, and recall failed with them because it logs what it surfaced. ormah_site/api.py maps such an
OperationalError to 507 storage_error, and recall answers without its surfacing record when the ledger refuses it.
"""

from __future__ import annotations

import pytest

from tests.faults.mounts import FullDisk, read_only
from tests.faults.support import Api, copy_home
from tests.postgres import sqlite_only

pytestmark = [pytest.mark.faults, pytest.mark.slow]


@sqlite_only(reason="the index is a SQLite file in the home; on PostgreSQL it is not on the home's disk (a full "
                    "home there answers 507 for writes and 200 for recall)")
def test_a_full_or_read_only_index_answers_507_for_writes_and_still_serves_recall(template_home, tmp_path, serve):
    home = copy_home(template_home, tmp_path / "home")
    with FullDisk(home, size_kib=16384) as disk:
        if disk.mode != "tmpfs":
            pytest.skip("needs a real full disk under a running server (mount); the fallback limits only the CLI")
        server = serve(home)
        api = Api(server.port, server.token)
        status, body = api.call("POST", "/api/agent/remember", {"content": "Deploys happen on Tuesdays"})
        assert status == 201
        check = {"target_id": body["node"]["id"], "status": "failed", "message": "x" * 1000, "detail": {
            "log": "y" * 60_000}}  # a row of the index alone (no node file): it needs new pages of the index
        with disk.full():
            full = {"remember": api.call("POST", "/api/agent/remember", {"content": "Written on a full disk"}),
                    "recall": api.call("POST", "/api/agent/recall", {"query": "deploys"}),
                    "whisper": api.call("POST", "/api/agent/whisper", {"prompt": "when do we deploy?"}),
                    "check": api.call("POST", "/api/agent/verifications", check),
                    "show": api.call("GET", f"/api/agent/nodes/{body['node']['id']}")}
        with read_only(home):
            frozen = {"recall": api.call("POST", "/api/agent/recall", {"query": "deploys"}),
                      "whisper": api.call("POST", "/api/agent/whisper", {"prompt": "when do we deploy?"}),
                      "show": api.call("GET", f"/api/agent/nodes/{body['node']['id']}")}
        server.kill_all()
    assert (full["remember"][0], full["remember"][1]["error"]) == (507, "storage_error")
    assert full["recall"][0] == 200, full["recall"]
    assert full["recall"][1]["results"][0]["content"] == "Deploys happen on Tuesdays"
    assert (full["check"][0], full["check"][1]["error"]) == (507, "storage_error"), full["check"]
    assert full["whisper"][0] == 200  # silent (whisper keeps its own errors from the agent)
    assert frozen["recall"][0] == 200
    assert frozen["whisper"][0] == 200
    # a recall by id still answers the memory; only its use goes unrecorded
    for show in (full["show"], frozen["show"]):
        assert (show[0], show[1]["node"]["content"]) == (200, "Deploys happen on Tuesdays"), show
