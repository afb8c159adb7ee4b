"""A read-only memory folder or home: every write through the API answers 507 with the error shape, the CLI prints
one clear line and exits 1, nothing changes, and writes work again once the folder is writable.

Read-only is a bind mount remounted `ro` (root ignores file modes); tests/faults/mounts.py falls back to chmod for
a normal user and says so, loudly, when neither is possible.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.faults.mounts import read_only
from tests.faults.state import files_state, index_state
from tests.faults.support import MANAGE, child_env, copy_home
from tests.faults.test_disk_full import WRITES, _call
from tests.postgres import sqlite_only

pytestmark = pytest.mark.faults


@pytest.fixture
def pair(api):
    a = api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays", "title": "Deploy day"})
    b = api.post("/api/agent/remember", {"content": "The release captain signs off every deploy"})
    assert (a.status_code, b.status_code) == (201, 201)
    return a.json()["node"]["id"], b.json()["node"]["id"]


@pytest.mark.parametrize("method, path, body", WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_a_write_to_a_read_only_memory_folder_answers_507_and_changes_nothing(api, home, pair, method, path, body):
    before = files_state(home / "memory"), index_state()
    with read_only(home / "memory"):
        response = _call(api, method, path, body, *pair)
    assert response.status_code == 507, response.content
    answer = response.json()
    assert (set(answer), answer["error"]) == ({"error", "message", "details"}, "storage_error")
    assert "read-only file system" in answer["message"].lower() or "permission denied" in answer["message"]
    assert (files_state(home / "memory"), index_state()) == before


def test_a_write_to_a_read_only_home_answers_507_and_works_again_once_writable(api, home, pair):
    before = files_state(home / "memory"), index_state()
    with read_only(home):
        response = api.post("/api/agent/remember", {"content": "Written into a frozen home"})
        assert (files_state(home / "memory"), index_state()) == before
    assert response.status_code == 507, response.content
    assert response.json()["error"] == "storage_error"
    assert api.post("/api/agent/remember", {"content": "Written once the home thawed"}).status_code == 201


@sqlite_only(reason="the start-up check of the SQLite index file in the home; on PostgreSQL the CLI stops at the "
                    "home's write lock instead (one CommandError line, exit 1)")
@pytest.mark.slow
def test_cli_remember_in_a_read_only_home_prints_one_clear_line_and_exits_1(template_home, tmp_path):
    home = copy_home(template_home, tmp_path / "home")
    before = files_state(home)
    with read_only(home) as how:
        done = subprocess.run([sys.executable, MANAGE, "remember", "Remembered into a frozen home"],
                              env=child_env(home), capture_output=True, text=True, timeout=120)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    # SQLite cannot open a WAL index without writing its shared-memory file, so the start-up check speaks first.
    assert done.stderr.startswith("SystemCheckError") and "(ormah.E003) The index database" in done.stderr
    assert "full or read-only" in done.stderr and "sqlite-vec (vec0) is not available" not in done.stderr
    assert how in ("bind-ro", "chmod")
    assert files_state(home) == before
