"""The write door: the one unit of work through which every service changes memory files.

    with write_unit() as unit:
        node, stored = unit.read(ref)               # the file as it is now, with its hash
        unit.audit(operation="update", node=node, now=now)
        unit.save(new, expected=stored)             # guarded write: a hand edit since the read is never lost
    # on a clean exit: rows, tags, edges, FTS, vectors and audit rows in ONE transaction

A unit holds the cross-process write lock for its whole life. Every file change is journalled (memory.files);
if the block raises, the files it changed are put back (a file edited by hand meanwhile is left as the person
made it) and the index is brought back in line, so a failed merge, undo or consolidation leaves nothing half
done. Units nest: a service called inside another service's unit joins it (the index is flushed first, so the
inner service sees what the outer one wrote), and only the outermost unit commits or rolls back.

If the index transaction itself fails it is handled like any failure of the block: the files the unit wrote are
put back and the index keeps none of the unit. Only a process killed before its commit leaves written files
without their rows; they are the truth and the next sync heals the index (docs/architecture.md, "The write door").

On PostgreSQL the documents table is the canonical store several hosts share (memory.documents): a unit also holds
a session advisory lock, first brings this host's folder in step with what other hosts wrote (memory.writes.pull), and
records every file it changed in the same transaction as the index rows.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path

from django.db import transaction

from memory import documents, files, files_new, index, runtime, set_aside
from memory.conf import MemoryConf, get_conf
from memory.domain.node import Node
from memory.domain.slug import node_filename
from memory.index_rows import row_only_change
from memory.errors import MalformedNodeFile, NodeNotFound, PayloadTooLarge, WriteConflict
from memory.models import NodeRow
from memory.malformed import node_read_error
from memory.selectors import node_read, node_row_get
from memory.audit import audit_note_many, audit_record
from memory.locking import held as _lock_held
from memory.locking import write_lock
from memory.files_new import Prepared
from memory.store import MAX_READ_BYTES, MarkdownStore, StoredFile, content_hash
from memory.writes.pull import pull, watermark_after

logger = logging.getLogger(__name__)
_local = threading.local()


class WriteUnit:
    """One locked unit of work over the memory files and their index (see the module docstring)."""

    def __init__(self, conf: MemoryConf) -> None:
        self.conf = conf
        self.store: MarkdownStore = runtime.store(conf)
        self._journal: files.Journal = []
        self._staged: dict[str, tuple[Node, StoredFile]] = {}
        self._fresh: set[str] = set()
        self._row_only: dict[str, str] = {}  # id -> hash of the file a row-only change was made from (save)
        self._removed: dict[str, None] = {}
        self._unsynced: set[Path] = set()
        self._after: list[Callable[[], object]] = []
        self._on_rollback: list[Callable[[], object]] = []
        self._flushed = False
        self._documents = documents.enabled()
        self._recorded = 0  # journal entries already recorded in the documents store
        self._vector_table_matched = False  # under this unit's lock nothing else can switch the model meanwhile

    # -- reading ------------------------------------------------------------

    def read(self, ref: str) -> tuple[Node, StoredFile]:
        """The node for an id or unique prefix as its file says now, with the file's hash; raises NodeNotFound, and
        MalformedNodeFile naming the file when the memory's file is malformed, before or after a sync dropped its row
        (memory.malformed.node_read_error: an edit answers as a read does, and the file is left untouched)."""
        try:
            return node_read(store=self.store, row=node_row_get(ref=ref))
        except (NodeNotFound, MalformedNodeFile) as exc:
            raise node_read_error(store=self.store, ref=ref, error=exc) from None

    def read_row(self, row: NodeRow) -> tuple[Node, StoredFile]:
        """The node of an index row as its file says now; raises NodeNotFound when the file is gone, MalformedNodeFile
        (as `read`) when it is malformed."""
        try:
            return node_read(store=self.store, row=row)
        except (NodeNotFound, MalformedNodeFile) as exc:
            raise node_read_error(store=self.store, ref=row.uid, error=exc) from None

    def row(self, ref: str) -> NodeRow:
        """The index row for an id or unique prefix (memory.selectors.node_row_get); a memory whose row a sync dropped
        because its file is malformed answers MalformedNodeFile naming the file, not NodeNotFound."""
        try:
            return node_row_get(ref=ref)
        except NodeNotFound as exc:
            raise node_read_error(store=self.store, ref=ref, error=exc) from None

    # -- writing files ------------------------------------------------------

    def save(self, node: Node, *, expected: StoredFile | None = None, fresh: bool = False, path: Path | None = None,
             mtime_ns: int | None = None, index: bool = True, before: Node | None = None) -> StoredFile:
        """Write a node's file and stage it for indexing.

        `expected`: the file as it was read; if it changed or vanished since, the app's version goes to conflicts/
        and WriteConflict is raised. `fresh`: the write minted the id, so no file can hold it yet and it takes
        its standard name when free. `index=False`: the caller syncs the folder itself (imports). `before`: the
        node read with `expected`; when `node` differs from it only in what its index row alone holds (importance,
        say: memory.index_rows.row_only_change), the index updates just those columns of the row, if the row was
        indexed from `expected` (memory.index.index_nodes), and derives nothing else again.
        Raises WriteConflict, Conflict (the path holds another node), StorageError, PayloadTooLarge (the file is
        larger than the store reads: the app never rewrites what it has not read whole).
        """
        _refuse_truncated(expected)
        # The folder is fsynced once per unit, before its index transaction (flush), not once per file.
        if expected is not None:
            stored = files.write_node(self.store, node, expected_hash=expected.hash, path=expected.path,
                                      journal=self._journal, sync_folder=False)
        else:
            if path is None and fresh and not _taken(target := self.store.nodes_dir / node_filename(node)):
                path = target
            stored = files.write_node(self.store, node, path=path, mtime_ns=mtime_ns, journal=self._journal,
                                      sync_folder=False)
        self._unsynced.add(stored.path.parent)
        if index:
            self._stage(node, stored, fresh=fresh)
            if before is not None and expected is not None and row_only_change(before, node):
                self._row_only[node.id] = expected.hash
        return stored

    def save_new(self, nodes: list[Node], *, prepared: Prepared | None = None) -> list[StoredFile]:
        """Write the files of nodes whose ids this unit just minted, all at once (memory.files_new.write_new_nodes: each
        fsynced before it gets its name), and stage them for indexing. `prepared`: their files written before the
        lock (`prepare_new`); each node that still encodes to its prepared bytes only gets its name here. Raises
        StorageError, ValidationFailed."""
        stored = files_new.write_new_nodes(self.store, nodes, journal=self._journal, prepared=prepared)
        for node, one in zip(nodes, stored, strict=True):
            self._unsynced.add(one.path.parent)
            self._stage(node, one, fresh=True)
        return stored

    def put_bytes(self, path: Path, text: str, node_id: str, *, expected: StoredFile | None = None) -> StoredFile:
        """Put a snapshot back byte for byte (merge undo) and stage the node it holds for indexing.

        `expected`: the file as it was read (guarded as in `save`; raises WriteConflict).
        """
        _refuse_truncated(expected)
        stored = files.write_bytes(self.store, path, text.encode("utf-8"), node_id,
                                   expected_hash=expected.hash if expected else None, journal=self._journal)
        if path.parent == self.store.nodes_dir:
            node, stored = self.store.read(path)
            self._stage(node, stored)
        return stored

    def forget(self, node_id: str, *, now: datetime, expected: StoredFile | None = None) -> Path:
        """Soft delete: the file moves to deleted/ and the node's rows go; returns the tombstone.

        `expected`: the file as it was read; an edit on disk since then raises WriteConflict (nothing moves).
        """
        _refuse_truncated(expected)
        dest = files.soft_delete(self.store, node_id, now=now, expected_hash=expected.hash if expected else None,
                                 journal=self._journal, indexed=expected.path if expected else None)
        self._staged.pop(node_id, None)
        self._row_only.pop(node_id, None)
        self._removed[node_id] = None
        return dest

    def restore(self, node_id: str) -> Node:
        """Bring a tombstone back to nodes/ and stage it; raises NodeNotFound, Conflict (a live file exists)."""
        path = files.restore(self.store, node_id, journal=self._journal)
        node, stored = self.store.read(path)
        self._stage(node, stored)
        return node

    def purge(self, node_id: str) -> list[Path]:
        """Hard-delete a node's tombstones; raises NodeNotFound when there is none."""
        return files.purge(self.store, node_id, journal=self._journal)

    def keep_conflict(self, target: Path, data: bytes) -> Path:
        """Keep a version that lost to the live file in conflicts/ (`<stem of target>.<time>.md`), as a guarded
        write keeps the app's version; returns the copy. Not journalled: a rollback never drops a kept version."""
        return files.conflict_copy(self.store, target, data)

    def put_back_set_aside(self) -> list[set_aside.SetAside]:
        """Recover the files a killed write left renamed aside (memory.set_aside.put_back_set_aside); the caller syncs
        the index afterwards. Not journalled: a rollback never hides a memory again."""
        return set_aside.put_back_set_aside(self.store)

    def remove_stale_temps(self, *, now: float) -> list[Path]:
        """Remove the temp files killed writes left, older than an hour (memory.set_aside.remove_stale_temps)."""
        return set_aside.remove_stale_temps(self.store, now=now)

    def match_vector_table(self) -> None:
        """Make the vec0 table match the embedder (memory.index.ensure_vector_table), once per unit: the unit's
        index writes then do not read the table's shape and the model id again."""
        if not self._vector_table_matched:
            index.ensure_vector_table(runtime.embedder(self.conf))
            self._vector_table_matched = True

    # -- ledgers written with the index -------------------------------------

    def audit(self, *, operation: str, node: Node, now: datetime, detail: dict | None = None) -> None:
        """Record `node` as it was before `operation`, in the same transaction as the index update."""
        self._after.append(lambda: audit_record(operation=operation, node=node, now=now, detail=detail))

    def audit_notes(self, *, operation: str, entries: Iterable[tuple[str, dict]], now: datetime) -> None:
        """Snapshot-free audit rows (bookkeeping writes), in the same transaction as the index update."""
        entries = list(entries)
        self._after.append(lambda: audit_note_many(operation=operation, entries=entries, now=now))

    def on_commit(self, fn: Callable[[], object]) -> None:
        """Run `fn` (a ledger row write) inside the index transaction of the next flush."""
        self._after.append(fn)

    def on_rollback(self, fn: Callable[[], object]) -> None:
        """Run `fn` after a rollback has put the files back (a ledger row that holds only while they stay)."""
        self._on_rollback.append(fn)

    # -- index --------------------------------------------------------------

    def flush(self) -> None:
        """Make the files written so far durable (their folders fsynced), then index what was staged (rows, tags,
        edges, FTS, vectors) and write the ledger rows, in one transaction."""
        if self._unsynced:
            files.sync_folders(sorted(self._unsynced))
            self._unsynced = set()
        unrecorded = [c.path for c in self._journal[self._recorded:]] if self._documents else []
        if not (self._staged or self._removed or self._after or unrecorded):
            return
        self._recorded = len(self._journal)
        pairs = list(self._staged.values())
        minted = {n.id for n, _ in pairs if n.id in self._fresh}
        row_only = self._row_only
        removed, after = list(self._removed), self._after
        self._staged, self._fresh, self._removed, self._after, self._row_only = {}, set(), {}, [], {}
        self._flushed = True
        with transaction.atomic():
            if pairs:
                index.index_nodes(self.store, pairs, embedder=runtime.embedder(self.conf), minted=minted,
                                  row_only=row_only, table_matched=self._vector_table_matched)
            if removed:
                index.remove_nodes(removed)
            for fn in after:
                fn()
            if unrecorded:
                documents.record_paths(self.store, unrecorded)

    def record_folder(self) -> int:
        """On PostgreSQL, record what differs in this host's folder (hand edits, hand deletes, files a killed write
        left) in the documents store before a sync indexes the folder; returns the versions added (0 on SQLite)."""
        return documents.record_folder(self.store) if self._documents else 0

    def _stage(self, node: Node, stored: StoredFile, *, fresh: bool = False) -> None:
        self._removed.pop(node.id, None)
        self._row_only.pop(node.id, None)
        self._staged[node.id] = (node, stored)
        if fresh:
            self._fresh.add(node.id)

    # -- rollback -----------------------------------------------------------

    def rollback(self) -> None:
        """Put back every file this unit changed, newest change first, then re-sync the index if it moved.

        A file whose bytes are no longer the ones this unit wrote was changed by someone else meanwhile (a hand
        edit): it is left alone, never overwritten.
        """
        self._staged, self._removed, self._after, self._unsynced, self._row_only = {}, {}, [], set(), {}
        recorded = [c.path for c in self._journal[:self._recorded]] if self._documents else []  # PostgreSQL only
        for change in reversed(self._journal):
            try:
                _undo(self.store, change)
            except Exception:  # Trigger: the disk refuses mid-rollback. Why: keep undoing the rest. Outcome: logged; the sync below and doctor see the rest.
                logger.exception("Could not roll back %s", change.path)
        self._journal = []
        hooks, self._on_rollback = self._on_rollback, []
        for fn in hooks:
            try:
                fn()
            except Exception:  # Trigger: a ledger cleanup fails. Why: the index re-sync below must still run. Outcome: logged; the next sync settles it.
                logger.exception("A rollback step failed")
        if recorded:
            try:
                with transaction.atomic():
                    documents.record_paths(self.store, recorded)
            except Exception:  # Trigger: the store refuses the put-back versions. Why: the index re-sync must still run. Outcome: logged; the next sync records the folder.
                logger.exception("Could not record the rolled-back files in the documents store")
        if self._flushed:
            index.sync(self.store, embedder=runtime.embedder(self.conf))


def _refuse_truncated(stored: StoredFile | None) -> None:
    if stored is not None and stored.truncated:
        raise PayloadTooLarge(
            f"{stored.path.name} is {stored.size:,} bytes; Ormah reads only its first {MAX_READ_BYTES // 1024} KiB and "
            "never rewrites it. Edit or split it by hand.", details={"path": str(stored.path), "size": stored.size})


def _taken(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _undo(store: MarkdownStore, change: files.Change) -> None:
    try:
        now: bytes | None = change.path.read_bytes()
    except FileNotFoundError:
        now = None
    if change.after_hash is None:
        if now is None and change.before is not None:
            files.restore_bytes(store, change.path, change.before)
        return
    if now is None or content_hash(now) != change.after_hash:
        logger.warning("Not rolling back %s: it changed on disk meanwhile", change.path)
        return
    try:
        if change.before is None:
            files.remove(store, change.path, expected_hash=change.after_hash)
        else:
            files.write_bytes(store, change.path, change.before, None, expected_hash=change.after_hash)
    except WriteConflict:
        logger.warning("Not rolling back %s: it changed on disk meanwhile", change.path)


@contextmanager
def write_unit(conf: MemoryConf | None = None) -> Iterator[WriteUnit]:
    """Take the write lock and open a unit of work; inside an open unit, join it (flushing it first).

    Raises StorageError when the lock cannot be taken; re-raises whatever the block raised after rolling back. Once
    its index transaction has committed, the unit does not raise (a caller's retry would write it twice).
    """
    current: WriteUnit | None = getattr(_local, "unit", None)
    if current is not None:
        current.flush()
        yield current
        current.flush()
        return
    conf = conf or get_conf()
    with write_lock(conf.lock_file), documents.host_lock():
        unit = WriteUnit(conf)
        _local.unit = unit
        try:
            if unit._documents:
                pull(unit.store, conf.home)
            yield unit
            unit.flush()
        except BaseException:
            unit.rollback()
            raise
        finally:
            _local.unit = None
        if unit._documents:
            watermark_after(conf.home)


def prepare_new(nodes: list[Node], conf: MemoryConf | None = None) -> Prepared:
    """Write and fsync the files of new nodes BEFORE the write lock, nameless (memory.files_new.prepare_new_nodes), so the
    unit that saves them (`WriteUnit.save_new(prepared=...)`) only names them under the lock. Nothing a crash could
    leave: an unnamed file goes with the process. The caller closes it after the write (`Prepared.close`). Raises
    StorageError."""
    conf = conf or get_conf()
    return files_new.prepare_new_nodes(runtime.store(conf), nodes)


def unit_open() -> bool:
    """True inside a unit of work on this thread (the write lock is held)."""
    return getattr(_local, "unit", None) is not None


def lock_held() -> bool:
    """True when this thread holds the write lock (inside a unit or `exclusive()`)."""
    return _lock_held()


@contextmanager
def exclusive(conf: MemoryConf | None = None) -> Iterator[MemoryConf]:
    """Hold the write lock without a unit (ledgers beside the node files, folder-wide copies); yields the conf."""
    conf = conf or get_conf()
    with write_lock(conf.lock_file), documents.host_lock():
        if documents.enabled():
            pull(runtime.store(conf), conf.home)
        yield conf
