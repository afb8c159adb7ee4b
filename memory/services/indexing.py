"""Index maintenance: incremental sync and full rebuild from the markdown files."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from django.db import close_old_connections

from memory import index, runtime
from memory.index import Progress, SyncReport
from memory.rebuild import rebuild
from memory.services.repair import interrupted_writes_recover
from memory.writes import write_unit


def index_sync(*, full: bool = False, verify: bool = False, progress: Progress | None = None,
               changed: Collection[Path] | None = None) -> SyncReport:
    """Index new and changed files and drop vanished ones; `full` rebuilds the index from the files in one swap
    (rows whose file hash is unchanged are kept; `verify` rewrites every row). What a killed write left half done
    is recovered first (memory.services.repair.interrupted_writes_recover). On PostgreSQL the unit has brought the
    folder in step with the documents store, and what this host's folder changed by hand is recorded there.

    `changed`: the files a watcher saw change. When each is already indexed as it is (the app's own writes), the
    sync scans nothing and returns an empty report; this is checked before the write lock and again under it (a
    write in flight has committed by then), so an agent's write never queues behind a scan its own file set off.
    """
    if changed is not None and not full and index.files_in_step(runtime.store(), changed):
        return SyncReport()
    with write_unit() as unit:
        if changed is not None and not full and index.files_in_step(unit.store, changed):
            return SyncReport()
        interrupted_writes_recover(unit=unit)
        unit.record_folder()  # PostgreSQL: this host's own edits go into the documents store first
        embedder = runtime.embedder(unit.conf)
        if full:
            return rebuild(unit.store, embedder=embedder, progress=progress, verify=verify)
        return index.sync(unit.store, embedder=embedder, progress=progress)


def index_sync_unattended(*, changed: Collection[Path] | None = None) -> SyncReport:
    """index_sync for a thread that serves no request (the file watcher of `ormah serve`). Django drops a connection
    the server closed (a PostgreSQL restart, a proxy's idle timeout) only around requests; such a thread kept its dead
    connection, and every later hand edit on that host failed to sync ("the connection is closed", session 22). So
    first close what is unusable or older than CONN_MAX_AGE; the next query checks health and reconnects."""
    close_old_connections()
    return index_sync(changed=changed)
