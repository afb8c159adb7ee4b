"""The watcher's sync after file events (index_sync with `changed`): the app's own writes, already indexed, cost
no scan of the folder and no write lock; a hand edit, a new file or a deletion among the changed files is synced."""

from __future__ import annotations

import os

from memory import runtime
from memory.models import NodeRow
from memory.services import index_sync


def _path(node):
    return runtime.store().path_for(node.id)


def test_the_apps_own_write_is_not_scanned_again(mem):
    node = mem("The glaze bucket is in the cellar", auto_link=False)
    mem("Kilns fire at dawn", auto_link=False)
    report = index_sync(changed={_path(node)})
    assert (report.indexed, report.unchanged, report.removed) == (0, 0, 0)  # nothing scanned


def test_a_hand_edit_among_the_changed_files_is_indexed(mem):
    node = mem("The glaze bucket is in the cellar", auto_link=False)
    mem("Kilns fire at dawn", auto_link=False)
    path = _path(node)
    path.write_text(path.read_text().replace("cellar", "garage"))
    report = index_sync(changed={path})
    assert (report.indexed, report.unchanged) == (1, 1)
    assert "garage" in NodeRow.objects.get(uid=node.id).content


def test_a_file_deleted_by_hand_is_dropped(mem):
    node = mem("The glaze bucket is in the cellar", auto_link=False)
    mem("Kilns fire at dawn", auto_link=False)  # on PostgreSQL a folder left with no memory file fetches them all again
    path = _path(node)
    os.remove(path)
    report = index_sync(changed={path})
    assert report.removed == 1
    assert not NodeRow.objects.filter(uid=node.id).exists()


def test_a_new_file_is_indexed(mem, home):
    node = mem("The glaze bucket is in the cellar", auto_link=False)
    copy = _path(node).with_name("fact_copied_by_hand.md")
    copy.write_text(_path(node).read_text().replace(node.id, "0f0f0f0f-0000-4000-8000-000000000001"))
    report = index_sync(changed={copy})
    assert report.indexed == 1
    assert NodeRow.objects.filter(uid="0f0f0f0f-0000-4000-8000-000000000001").exists()
