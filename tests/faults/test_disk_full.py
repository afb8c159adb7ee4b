"""A full disk: every write through the API answers 507 with the error shape, the CLI prints one clear line and
exits 1, and nothing that was there changes (file bytes, index rows). Writes work again once space returns.

The disk is a small tmpfs mounted on the memory folder (or the whole home) and filled; where mounting is not
allowed the fallback is RLIMIT_FSIZE 0 with SIGXFSZ ignored (tests/faults/mounts.py), and the message then says
"File too large" instead of "disk full".
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.faults.mounts import FullDisk
from tests.faults.state import files_state, index_state
from tests.faults.support import MANAGE, child_env, copy_home, index_count

pytestmark = pytest.mark.faults

WRITES = [
    ("post", "/api/agent/remember", {"content": "Written while the disk is full"}),
    ("post", "/api/agent/remember/batch", {"nodes": [{"content": "One of a batch on a full disk"}]}),
    ("patch", "/api/agent/nodes/{a}", {"content": "Deploys moved to Wednesdays"}),
    ("delete", "/api/agent/nodes/{a}", None),
    ("post", "/api/agent/nodes/{a}/outdated", {"reason": "we deploy daily now"}),
    ("post", "/api/agent/connect", {"source_id": "{a}", "target_id": "{b}", "edge": "supports"}),
]


@pytest.fixture
def disk(home):
    with FullDisk(home / "memory") as disk:
        yield disk


@pytest.fixture
def pair(api, disk):
    a = api.post("/api/agent/remember", {"content": "Deploys happen on Tuesdays", "title": "Deploy day"})
    b = api.post("/api/agent/remember", {"content": "The release captain signs off every deploy"})
    assert (a.status_code, b.status_code) == (201, 201)
    return a.json()["node"]["id"], b.json()["node"]["id"]


def _call(api, method, path, body, a, b):
    fill = lambda v: v.format(a=a, b=b) if isinstance(v, str) else v  # noqa: E731
    path = fill(path)
    body = {k: fill(v) for k, v in body.items()} if body else body
    if method == "delete":
        return api.delete(path)
    return getattr(api, method)(path, body)


@pytest.mark.parametrize("method, path, body", WRITES, ids=[f"{m} {p}" for m, p, _ in WRITES])
def test_a_write_on_a_full_disk_answers_507_and_changes_nothing(api, home, disk, pair, method, path, body):
    before = files_state(home / "memory"), index_state()
    with disk.full():
        response = _call(api, method, path, body, *pair)
    assert response.status_code == 507, response.content
    answer = response.json()
    assert (set(answer), answer["error"]) == ({"error", "message", "details"}, "storage_error")
    assert disk.reason in answer["message"]
    assert (files_state(home / "memory"), index_state()) == before


def test_writes_succeed_again_once_space_returns(api, home, disk, pair):
    with disk.full():
        assert api.post("/api/agent/remember", {"content": "Too early"}).status_code == 507
    response = api.post("/api/agent/remember", {"content": "Space is back"})
    assert response.status_code == 201
    short = response.json()["node"]["short_id"]
    assert len(list((home / "memory" / "nodes").glob(f"*_{short}.md"))) == 1


@pytest.mark.slow
@pytest.mark.parametrize("where", ["memory folder", "whole home"])
def test_cli_remember_on_a_full_disk_prints_one_clear_line_and_exits_1(template_home, tmp_path, where):
    home = copy_home(template_home, tmp_path / "home")
    folder = home / "memory" if where == "memory folder" else home
    with FullDisk(folder, size_kib=8192) as disk:
        before = files_state(home / "memory")
        rows = index_count(home, "SELECT count(*) FROM memory_noderow")
        with disk.full():
            done = subprocess.run([sys.executable, MANAGE, "remember", "Remembered on a full disk"],
                                  env=child_env(home), capture_output=True, text=True, timeout=120,
                                  preexec_fn=disk.preexec())
        after = files_state(home / "memory")
        assert index_count(home, "SELECT count(*) FROM memory_noderow") == rows
    assert done.returncode == 1
    assert "Traceback" not in done.stderr, done.stderr
    if disk.mode == "tmpfs" and where == "memory folder":
        assert done.stderr.startswith("CommandError: Cannot write ") and "disk full" in done.stderr, done.stderr
    elif disk.mode == "tmpfs":
        # Whichever write meets the full disk first (evidence ledger, index) names the disk, in one line or as
        # the start-up check's ormah.E003, never as a missing extension.
        assert any(s in done.stderr for s in ("No space left on device", "disk full", "full or read-only")), \
            done.stderr
        assert "sqlite-vec (vec0) is not available" not in done.stderr
    else:
        assert "Cannot" in done.stderr or "cannot be used" in done.stderr, done.stderr
    assert after == before
