"""`ormah sync PATH`: reconcile a folder of memory files (a git checkout, say) with the store, both ways.

The plan is pure (memory.domain.folder_sync); this module reads both sides, applies the plan and records the new
base in the folder's state file (memory.sync_folder). It runs in one write unit on either engine: the store side
goes through the write door (a changed file is put in byte for byte, as a hand edit would be, and indexed; a
removal is `node_forget`, a restore `node_restore`), the unit commits, then the folder side is written. On
PostgreSQL the unit has brought this host's folder in step with the documents store and the nested index sync
records this host's own hand edits first, so this host's folder is the shared store here (docs/team-server.md,
"Syncing a folder").
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path

from django.db import connection

from memory import documents, runtime
from memory.domain.folder_sync import SyncFile, SyncItem, SyncState, SyncStep, held_by, sync_plan
from memory.domain.identity import is_self_node
from memory.domain.markdown import render
from memory.domain.node import Node, utcnow
from memory.errors import OrmahError, StorageError, ValidationFailed
from memory.services.indexing import index_sync
from memory.services.nodes import node_forget, node_restore
from memory.store import MarkdownStore, StoredFile, content_hash
from memory.sync_folder import (
    FolderFile,
    conflict_keep,
    file_put,
    file_remove,
    folder_scan,
    NODES,
    free_name,
    state_read,
    state_write,
)
from memory.writes import WriteUnit, write_unit

QUIET = frozenset({SyncStep.IN_STEP, SyncStep.GONE})


@dataclass(frozen=True)
class _Live:
    """The store's live file of a memory."""

    node: Node
    stored: StoredFile
    data: bytes

    @property
    def rel(self) -> str:
        return f"nodes/{self.stored.path.name}"


@dataclass
class FolderSyncReport:
    """What a sync planned (`items`, every memory) and, unless `dry_run`, did: `kept` lists the copies of the
    versions that lost a conflict, `errors` what was left undone (id or path, why), `malformed` the folder's files
    left alone."""

    path: Path
    dry_run: bool
    items: list[SyncItem] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    errors: list[tuple[str, str]] = field(default_factory=list)
    malformed: list[tuple[str, str]] = field(default_factory=list)
    notice: str = ""

    @property
    def changes(self) -> list[SyncItem]:
        return [i for i in self.items if i.step not in QUIET]

    @property
    def conflicts(self) -> list[SyncItem]:
        return [i for i in self.items if i.conflict]

    @property
    def held(self) -> list[SyncItem]:
        return [i for i in self.items if i.step == SyncStep.HELD]

    @property
    def clean(self) -> bool:
        """Nothing needs a person: no conflict, no error, no malformed file, no memory left alone."""
        return not (self.conflicts or self.errors or self.malformed or self.held)

    def counts(self) -> dict[str, int]:
        counts = {step.value: 0 for step in SyncStep}
        for item in self.items:
            counts[item.step.value] += 1
        return counts

    def as_dict(self) -> dict:
        return {"path": str(self.path), "dry_run": self.dry_run, "counts": self.counts(),
                "changes": [{"id": i.node_id, "step": i.step.value, "reason": i.reason, "conflict": i.conflict,
                             "folder_path": i.folder.path if i.folder else None,
                             "store_path": i.store.path if i.store else None} for i in self.changes],
                "kept": self.kept, "errors": [{"what": w, "reason": r} for w, r in self.errors],
                "malformed": [{"path": p, "reason": r} for p, r in self.malformed], "notice": self.notice}


def folder_sync(*, path: Path, dry_run: bool = False, now: datetime | None = None) -> FolderSyncReport:
    """Reconcile the folder `path` (its `nodes/*.md`) with the store both ways and record the new base.

    `dry_run` plans without writing anything. Conflicts never lose a version (docs/team-server.md). Raises
    ValidationFailed for a path that is not a usable folder or an unreadable state file, StorageError when the
    store's disk refuses (the store side is then rolled back and the folder left as it was).
    """
    now = now or utcnow()
    root = _folder_root(Path(path), store=runtime.store(), create=not dry_run)
    report = FolderSyncReport(path=root, dry_run=dry_run)
    state = state_read(root)
    with write_unit() as unit:
        if not dry_run:
            index_sync()  # joins the unit: recovers killed writes, records and indexes hand edits of the store
        key = _store_key(unit.store)
        base = dict(state.base) if state is not None and state.store_key == key else {}
        if state is not None and state.store_key != key:
            report.notice = (f"the folder was last synced with another store ({state.store_key}); syncing as the "
                             "first time: nothing is deleted, every difference is kept as a conflict")
        scan = folder_scan(root)
        live, tombs, store_malformed, protected = _store_read(unit.store)
        report.malformed = scan.malformed
        ids = set(scan.files) | set(live)
        held = {i: f"the store's {p} does not parse" for i, p in held_by(malformed=store_malformed, ids=ids,
                                                                             base={}).items()}
        held |= {i: f"{p} does not parse" for i, p in held_by(malformed=[p for p, _ in scan.malformed], ids=ids,
                                                                base=base).items()}
        held |= {i: f"{p} and another file of the folder hold it" for i, p in scan.doubled.items()}
        if protected:  # one self node per store: `ormah import` folds another's identity links into it
            held |= {i: f"{f.rel} is a second self node; the store has its own" for i, f in scan.files.items()
                     if f.is_self and i not in protected}
        report.items = sync_plan(
            folder={i: SyncFile(f.rel, f.sha256) for i, f in scan.files.items()},
            store={i: SyncFile(c.rel, content_hash(c.data)) for i, c in live.items()},
            base=base, forgotten={i: sha for i, (_, sha) in tombs.items()}, held=held, protected=protected)
        if dry_run:
            return report
        failed = set()
        for item in report.items:
            try:
                _store_side(unit, item, scan.files.get(item.node_id), live.get(item.node_id),
                            tombs.get(item.node_id), base.get(item.node_id), report, now)
            except StorageError:
                raise
            except OrmahError as exc:
                report.errors.append((item.node_id, exc.message))
                failed.add(item.node_id)
        unit.flush()
        for item in report.items:
            if item.node_id in failed:
                continue
            try:
                after = _folder_side(root, item, scan.files.get(item.node_id), live.get(item.node_id),
                                     tombs.get(item.node_id), base.get(item.node_id), report, now)
            except OrmahError as exc:
                report.errors.append((item.node_id, exc.message))
                continue
            if after is None:
                base.pop(item.node_id, None)
            else:
                base[item.node_id] = after
        state_write(root, SyncState(store_key=key, base=base))
    return report


# ---------------------------------------------------------------------------
# Reading both sides
# ---------------------------------------------------------------------------

def _folder_root(path: Path, *, store: MarkdownStore, create: bool) -> Path:
    root = path.expanduser().absolute()
    memory = store.root.expanduser().absolute()
    if root.resolve() == memory.resolve() or root.resolve().is_relative_to(memory.resolve()):
        raise ValidationFailed(f"{root} is the store's own memory folder; sync another folder with it")
    if root.exists() and not root.is_dir():
        raise ValidationFailed(f"{root} is not a folder")
    if not root.exists():
        if not root.parent.is_dir():
            raise ValidationFailed(f"{root.parent} does not exist; create it first")
        if create:
            try:
                root.mkdir()
            except OSError as exc:
                raise ValidationFailed(f"Cannot create {root}: {exc.strerror or exc}") from exc
    return root


def _store_key(store: MarkdownStore) -> str:
    """Which store a state file was written for: the database on PostgreSQL, the memory folder on SQLite."""
    if documents.enabled():
        s = connection.settings_dict
        return f"postgresql://{s.get('HOST') or ''}:{s.get('PORT') or ''}/{s.get('NAME') or ''}"
    return f"folder:{store.root.expanduser().resolve()}"


def _store_read(store: MarkdownStore) -> tuple[dict[str, _Live], dict[str, tuple[Path, str]], list[str], set[str]]:
    """The store's live memories by id; its tombstones by id (path, sha256 of the forgotten version as a live file);
    the paths of its files that do not parse; the ids it never forgets (the self node)."""
    live: dict[str, _Live] = {}
    malformed: list[str] = []
    protected: set[str] = set()
    for item in store.scan():
        if item.node is None:
            malformed.append(f"nodes/{item.path.name}")
            continue
        if item.node.id in live:
            continue
        try:
            data = item.path.read_bytes()
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise StorageError(f"Cannot read {item.path}: {exc.strerror or exc}") from exc
        live[item.node.id] = _Live(node=item.node, stored=item.stored, data=data)
        if is_self_node(item.node):
            protected.add(item.node.id)
    tombs: dict[str, tuple[Path, str]] = {}
    for path in store.deleted_paths():
        try:
            node, _ = store.read(path)
        except (FileNotFoundError, OrmahError):
            continue
        if node.id not in live:
            tombs[node.id] = (path, content_hash(render(replace(node, deleted_at=None)).encode("utf-8")))
    return live, tombs, malformed, protected


# ---------------------------------------------------------------------------
# Applying the plan
# ---------------------------------------------------------------------------

def _store_side(unit: WriteUnit, item: SyncItem, mine: FolderFile | None, live: _Live | None,
                tomb: tuple[Path, str] | None, base: SyncFile | None, report: FolderSyncReport, now: datetime) -> None:
    """The store's half of an item (raises OrmahError; nothing is half done for a WriteConflict)."""
    step = item.step
    if step == SyncStep.TO_STORE:
        if live is None:
            unit.put_bytes(_free(unit.store, mine), mine.data.decode("utf-8"), mine.node_id)
        else:
            unit.put_bytes(live.stored.path, mine.data.decode("utf-8"), mine.node_id, expected=live.stored)
            unit.audit(operation="sync", node=live.node, now=now)  # queued once the write has gone through
    elif step == SyncStep.FORGET:
        node_forget(ref=item.node_id, now=now)
    elif step == SyncStep.CONFLICT:
        kept = unit.keep_conflict(live.stored.path, mine.data)
        report.kept.append(str(kept))
    elif step == SyncStep.RESTORE:
        _restore(unit, item, mine, tomb, base, report, now)


def _restore(unit: WriteUnit, item: SyncItem, mine: FolderFile, tomb: tuple[Path, str] | None,
             base: SyncFile | None, report: FolderSyncReport, now: datetime) -> None:
    """Bring a forgotten memory back with the folder's version; the forgotten one is kept in conflicts/ when the
    store had changed it since the last sync."""
    if tomb is None:
        unit.put_bytes(_free(unit.store, mine), mine.data.decode("utf-8"), mine.node_id)
        return
    path, forgotten_sha = tomb
    if base is None or forgotten_sha != base.sha256:
        report.kept.append(str(unit.keep_conflict(path, path.read_bytes())))
    node_restore(node_id=item.node_id, now=now)
    restored = unit.store.path_for(item.node_id)
    _, stored = unit.store.read(restored)
    unit.put_bytes(restored, mine.data.decode("utf-8"), mine.node_id, expected=stored)


def _folder_side(root: Path, item: SyncItem, mine: FolderFile | None, live: _Live | None,
                 tomb: tuple[Path, str] | None, base: SyncFile | None, report: FolderSyncReport,
                 now: datetime) -> SyncFile | None:
    """The folder's half of an item; returns the memory's new base (None: no base any more)."""
    step = item.step
    if step == SyncStep.HELD:
        return base
    if step in (SyncStep.GONE, SyncStep.FORGET):
        return None
    if step in (SyncStep.IN_STEP, SyncStep.TO_STORE, SyncStep.RESTORE):
        return SyncFile(mine.rel, mine.sha256)
    if step in (SyncStep.REMOVE, SyncStep.DROP):
        if step == SyncStep.DROP and mine.sha256 != tomb[1]:
            report.kept.append(str(root / conflict_keep(root, mine.rel, mine.data, now=now)))
        file_remove(root, mine.rel, expected=mine.data)
        return None
    if step == SyncStep.CONFLICT:
        report.kept.append(str(root / conflict_keep(root, mine.rel, mine.data, now=now)))
    if mine is not None:
        file_put(root, mine.rel, live.data, expected=mine.data)
        return SyncFile(mine.rel, content_hash(live.data))
    want = base.path.split("/")[-1] if base is not None else live.stored.path.name
    rel = f"{NODES}/{free_name(root / NODES, want)}"
    file_put(root, rel, live.data, expected=None)
    return SyncFile(rel, content_hash(live.data))


def _free(store: MarkdownStore, mine: FolderFile) -> Path:
    """A free path in the store's nodes/ for a memory new to it, named as the folder's file."""
    return store.nodes_dir / free_name(store.nodes_dir, mine.rel.split("/")[-1])
