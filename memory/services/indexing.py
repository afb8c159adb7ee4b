"""Index maintenance: incremental sync and full rebuild from the markdown files."""

from __future__ import annotations

from memory import index, runtime
from memory.index import Progress, SyncReport
from memory.services.repair import interrupted_writes_recover
from memory.writes import write_unit


def index_sync(*, full: bool = False, verify: bool = False, progress: Progress | None = None) -> SyncReport:
    """Index new and changed files and drop vanished ones; `full` rebuilds the index from the files in one swap
    (rows whose file hash is unchanged are kept; `verify` rewrites every row). What a killed write left half done
    is recovered first (memory.services.repair.interrupted_writes_recover)."""
    with write_unit() as unit:
        interrupted_writes_recover(unit=unit)
        return index.sync(unit.store, embedder=runtime.embedder(unit.conf), full=full, verify=verify,
                          progress=progress)
