"""Index maintenance: incremental sync and full rebuild from the markdown files."""

from __future__ import annotations

from memory import index, runtime
from memory.conf import get_conf
from memory.index import Progress, SyncReport
from memory.services.locking import write_lock


def index_sync(*, full: bool = False, progress: Progress | None = None) -> SyncReport:
    """Index new and changed files and drop vanished ones; `full` rebuilds every row from the files."""
    conf = get_conf()
    with write_lock(conf.lock_file):
        return index.sync(runtime.store(conf), embedder=runtime.embedder(conf), full=full, progress=progress)
