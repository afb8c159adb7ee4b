"""The watcher's sync after file events (index_sync with `changed`): the app's own writes, already indexed, cost
no scan of the folder and no write lock; a hand edit, a new file or a deletion among the changed files is synced."""

from __future__ import annotations

import os
import time

from memory import runtime
from memory.models import NodeRow
from memory.services import index_sync
from memory.watcher import NodeFolderWatcher


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
    path.write_text(path.read_text().replace("cellar", "garage shelf"))
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


def _keep_writing_until(done, path, limit=60.0):
    """Write `path` every 0.1 s (a steady stream of events) until `done()` or `limit` seconds."""
    deadline = time.monotonic() + limit
    n = 0
    while not done() and time.monotonic() < deadline:
        n += 1
        path.write_text(f"event {n}\n")
        time.sleep(0.1)


def test_the_full_sweep_still_runs_while_events_keep_coming(tmp_path):
    """The app's own writes wake the watcher all the time; a change the OS never reported must still be found."""
    folder = tmp_path / "nodes"
    folder.mkdir()
    full, changed = [], []
    watcher = NodeFolderWatcher(folder, lambda: full.append(1), sync_changed=changed.append, debounce=0.02,
                                sweep=0.5)
    watcher.start()
    try:
        _keep_writing_until(lambda: full and changed, folder / "busy.md")
    finally:
        watcher.stop()
    assert changed and full  # both kinds of pass ran; before, the sweep waited for a quiet spell


def test_the_paths_of_a_failed_pass_are_kept_for_the_next(tmp_path):
    folder = tmp_path / "nodes"
    folder.mkdir()
    seen: list[set] = []

    def sync_changed(paths):
        seen.append(set(paths))
        if len(seen) == 1:
            raise RuntimeError("the database is busy")

    watcher = NodeFolderWatcher(folder, lambda: None, sync_changed=sync_changed, debounce=0.02, sweep=3600)
    watcher.start()
    try:
        (folder / "edited.md").write_text("a hand edit\n")
        _keep_writing_until(lambda: len(seen) >= 2, folder / "later.md")
    finally:
        watcher.stop()
    assert folder / "edited.md" in seen[0] and folder / "edited.md" in seen[1]


def test_reads_of_node_files_and_the_folders_own_events_are_not_delivered(tmp_path):
    from pathlib import Path

    from watchdog.events import FileSystemEventHandler

    folder = tmp_path / "nodes"
    folder.mkdir()
    (folder / "kept.md").write_text("a memory\n")
    seen: list[tuple[str, str]] = []

    class Recorder(FileSystemEventHandler):  # a second handler on the watcher's watch: every event it is delivered
        def on_any_event(self, event):
            seen.append((event.event_type, Path(str(event.src_path)).name))

    watcher = NodeFolderWatcher(folder, lambda: None, sync_changed=lambda paths: None, debounce=0.02, sweep=3600)
    watcher.start()
    try:
        watcher._observer.add_handler_for_watch(Recorder(), watcher._watch)
        for _ in range(3):
            (folder / "kept.md").read_text()  # another process reading a memory (a backup, the CLI, a sync)
        (folder / "new.md").write_text("a hand edit\n")
        deadline = time.monotonic() + 10
        while ("closed", "new.md") not in seen and time.monotonic() < deadline:
            time.sleep(0.02)
    finally:
        watcher.stop()
    assert ("created", "new.md") in seen and ("closed", "new.md") in seen  # a write is still seen
    # the reads' opens and closes and the folder's own "modified" were delivered only for the handler to drop them
    assert [e for e in seen if e[0] in ("opened", "closed_no_write") or e[1] == "nodes"] == []
