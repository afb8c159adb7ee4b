"""Temp files a write killed between its temp file and the rename left behind (`.ormah_XXXXXXXX.tmp`) are removed by
the next sync (startup, the watcher, `ormah doctor --heal`) once over an hour old, and `ormah doctor` names them;
nothing that is not such a file is touched (fix4, session 21: they accumulated over many crashes)."""

from __future__ import annotations

import os

import pytest

import memory.store
from memory import runtime
from memory.services import index_sync
from tests.support.doctor import doctor_checks


@pytest.fixture
def leftovers(mem, tmp_path):
    mem("the boiler is serviced in March", auto_link=False)
    store = runtime.store()
    store.deleted_dir.mkdir(exist_ok=True)
    store.conflicts_dir.mkdir(exist_ok=True)
    ours = [store.nodes_dir / ".ormah_ab12cd_3.tmp", store.deleted_dir / ".ormah_zz9x8y7w.tmp",
            store.conflicts_dir / ".ormah_q1w2e3r4.tmp"]
    for path in ours:
        path.write_bytes(b"---\nid: half written")
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours")
    theirs = [store.nodes_dir / ".ormah_notours.tmp", store.nodes_dir / ".ormah_ABCDEFGH.tmp",
              store.nodes_dir / ".other_ab12cd34.tmp", store.nodes_dir / "notes.tmp",
              store.nodes_dir / ".ormah_ab12cd34.tmp.bak", store.nodes_dir / ".ormah_lnk12345.tmp",
              store.nodes_dir / ".ormah_dir12345.tmp"]
    for path in theirs[:5]:
        path.write_text("a file of someone else")
    os.symlink(outside, theirs[5])
    theirs[6].mkdir()
    return ours, theirs, outside


def test_sync_removes_only_our_stale_temp_files(leftovers, monkeypatch):
    ours, theirs, outside = leftovers
    index_sync()  # an hour has not passed: a write could still be in flight
    assert all(p.exists() for p in ours)

    monkeypatch.setattr(memory.store, "STALE_TEMP_AGE_S", -1.0)  # as if they were older than an hour
    index_sync()
    assert [p.name for p in ours if p.exists()] == []
    assert [p.name for p in theirs if not os.path.lexists(p)] == []
    assert outside.read_text() == "not ours"


def test_doctor_names_stale_temp_files_and_leaves_them(leftovers, monkeypatch):
    ours, theirs, _ = leftovers
    assert doctor_checks()["stale_temp_files"] == {"check": "stale_temp_files", "ok": True, "detail": "none"}

    monkeypatch.setattr(memory.store, "STALE_TEMP_AGE_S", -1.0)
    found = doctor_checks()["stale_temp_files"]
    assert found["ok"] is True and found.get("warning") is True
    assert "3 temp files" in found["detail"]
    assert all(p.name in found["detail"] for p in ours)
    assert not any(p.name in found["detail"] for p in theirs)
    assert all(p.exists() for p in ours)
