"""Files on disk that are not ordinary node files (issue 12 defects 7, 8, 9 and 10): malformed files leak no text
and are reported once per change, the watcher does not spin on them, symbolic links are never followed or
replaced, huge files are read only in part and never rewritten, and a duplicated id is reported."""

from __future__ import annotations

import json
import logging
import os
import time

import pytest

from memory import runtime
from memory.domain.requests import NodePatch
from memory.errors import PayloadTooLarge
from memory.models import NodeRow
from memory.selectors import health_report, node_get
from memory.services import index_sync, node_confirm_use, node_update
from memory.store import MAX_READ_BYTES
from memory.watcher import NodeFolderWatcher
from tests.support.doctor import doctor_checks

SECRET = "hunter2-secret"
BROKEN = f"---\nid: 3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f\npassword: {SECRET}\n  oops: [\n---\n\nBody\n"


@pytest.fixture
def nodes(home, db):
    folder = home / "memory" / "nodes"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_a_malformed_file_is_reported_without_its_text(nodes, caplog):
    (nodes / "fact_broken_3f2a9c1e.md").write_text(BROKEN)
    with caplog.at_level(logging.WARNING):
        report = index_sync()
    health = json.dumps(health_report(store=runtime.store()))
    doctor = json.dumps(doctor_checks())
    assert [r for _, r in report.malformed] == ["invalid YAML: mapping values are not allowed here (line 4)"]
    assert SECRET not in caplog.text + health + doctor
    assert "fact_broken_3f2a9c1e.md" in caplog.text


def test_a_malformed_file_is_logged_once_per_change(nodes, caplog):
    path = nodes / "fact_broken_3f2a9c1e.md"
    path.write_text(BROKEN)
    with caplog.at_level(logging.WARNING):
        index_sync()
        index_sync()
        path.write_text(BROKEN + "more\n")
        index_sync()
    assert caplog.text.count("Skipping malformed memory file") == 2


def test_the_watcher_does_not_spin_while_a_malformed_file_exists(nodes):
    (nodes / "fact_broken_3f2a9c1e.md").write_text(BROKEN)
    store = runtime.store()
    passes = []
    watcher = NodeFolderWatcher(nodes, lambda: passes.append(list(store.scan())), debounce=0.05, sweep=60)
    watcher.start()
    try:
        (nodes / "fact_broken_3f2a9c1e.md").write_text(BROKEN + "x\n")
        time.sleep(3)
    finally:
        watcher.stop()
    assert 1 <= len(passes) <= 2


def test_a_symbolic_link_is_reported_and_never_read_or_replaced(nodes, mem, tmp_path):
    outside = tmp_path / "outside.md"
    node = mem("A memory whose file will be linked", auto_link=False)
    outside.write_bytes(runtime.store().path_for(node.id).read_bytes().replace(node.id[:8].encode(), b"9" * 8))
    link = nodes / "fact_linked_99999999.md"
    link.symlink_to(outside)
    report = index_sync()
    assert [r for p, r in report.malformed if p == str(link)] == ["a symbolic link: skipped, never followed or replaced"]
    assert not NodeRow.objects.filter(file_path="nodes/fact_linked_99999999.md").exists()
    assert doctor_checks()["malformed_files"]["ok"] is False
    assert link.is_symlink() and os.readlink(link) == str(outside)


def _huge(nodes, mem) -> tuple:
    node = mem("A note that will grow huge", auto_link=False)
    path = runtime.store().path_for(node.id)
    path.write_text(path.read_text() + ("All work and no play. " * 50_000))  # ~1.1 MB
    index_sync()
    return node, path


def test_a_huge_file_is_read_only_in_part_and_never_rewritten(nodes, mem):
    node, path = _huge(nodes, mem)
    before = path.read_bytes()
    served = node_get(store=runtime.store(), ref=node.id)
    assert len(served.content.encode()) < MAX_READ_BYTES
    assert served.content.endswith(f"of this {len(before):,}-byte file]")
    assert len(NodeRow.objects.get(uid=node.id).content.encode()) < MAX_READ_BYTES
    node_confirm_use(ref=node.id)
    with pytest.raises(PayloadTooLarge):
        node_update(ref=node.id, patch=NodePatch(title="Huge"))
    assert path.read_bytes() == before
    assert doctor_checks()["large_files"]["warning"] is True


def test_a_duplicated_id_is_reported_by_doctor(nodes, mem):
    node = mem("A memory copied by hand", auto_link=False)
    path = runtime.store().path_for(node.id)
    (nodes / "fact_copy-of-it.md").write_bytes(path.read_bytes())
    index_sync()
    check = doctor_checks()["duplicate_ids"]
    assert check["ok"] is False
    assert node.id in check["detail"] and "fact_copy-of-it.md" in check["detail"]

