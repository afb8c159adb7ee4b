"""Backups: a consistent snapshot of the memory files and the index, retention, and a verified restore.

A backup is `<BACKUP_DIR>/memory_YYYY-MM-DD_HH-MM-SS/` holding `nodes/`, `deleted/`, `index.sqlite3` (SQLite's
online backup of the whole index, ledgers included) and `backup.json` (created_at, reason, counts, sha256 per
file). Files and index are copied under the memory write lock, so they are the same moment. Restore verifies
every hash first, moves the current memory folder aside into a pre-restore backup (never pruned), writes the
backup's files and brings its index back, or rebuilds the index from the files when the schema has moved on.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.db import DatabaseError

from memory.backends import backend
from memory.conf import get_conf
from memory.domain.markdown import format_timestamp
from memory.domain.node import utcnow
from memory.errors import OrmahError, StorageError, ValidationFailed
from memory.index import SyncReport
from memory.services.importing import MEMORY_FOLDERS, MemoryFile, memory_folder_files
from memory.services.indexing import index_sync
from memory.writes import exclusive
from memory.services.portability import file_counts, file_entries, files_verify

logger = logging.getLogger(__name__)

BACKUP_FORMAT = "ormah-backup"
BACKUP_VERSION = 1
MANIFEST = "backup.json"
INDEX_FILE = "index.sqlite3"
PRE_RESTORE = "pre-restore"
NAME_FORMAT = "memory_%Y-%m-%d_%H-%M-%S"


@dataclass(frozen=True)
class BackupConf:
    folder: Path
    keep: int


def backup_conf() -> BackupConf:
    """Where backups live and how many ordinary ones to keep (ORMAH BACKUP_DIR, BACKUP_KEEP)."""
    o = settings.ORMAH
    return BackupConf(folder=Path(o.get("BACKUP_DIR") or Path(o["HOME"]) / "backups"),
                      keep=max(1, int(o.get("BACKUP_KEEP", 10))))


@dataclass(frozen=True)
class BackupInfo:
    name: str
    path: Path
    created_at: str
    reason: str
    counts: dict
    restorable: bool

    def as_dict(self) -> dict:
        return {"name": self.name, "path": str(self.path), "created_at": self.created_at, "reason": self.reason,
                "counts": self.counts, "restorable": self.restorable}


@dataclass(frozen=True)
class RestoreReport:
    name: str
    pre_restore: str
    counts: dict
    index: str
    sync: SyncReport

    def as_dict(self) -> dict:
        return {"restored": self.name, "pre_restore": self.pre_restore, "counts": self.counts, "index": self.index,
                "sync": self.sync.as_dict()}


# ---------------------------------------------------------------------------
# Create, list, prune
# ---------------------------------------------------------------------------

def backup_create(*, reason: str = "manual", now: datetime | None = None) -> BackupInfo:
    """Snapshot the memory files and the index into a new backup, then prune to the newest BACKUP_KEEP.

    Raises StorageError when the backup folder cannot be written (the memory itself is never touched).
    """
    conf, bconf = get_conf(), backup_conf()
    now = now or utcnow()
    with exclusive(conf):
        info = _snapshot(root=conf.memory_dir, folder=bconf.folder, name=now.strftime(NAME_FORMAT),
                         reason=reason, now=now, move=False)
    backup_prune(keep=bconf.keep)
    return info


def backup_list() -> list[BackupInfo]:
    """Every backup in the backup folder, newest first; original Ormah backups are listed as not restorable."""
    folder = backup_conf().folder
    found = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else []:
        if path.name.startswith(".") or not (path / MANIFEST).is_file():
            continue
        try:
            manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            logger.warning("Skipping backup %s: unreadable %s (%s)", path, MANIFEST, exc)
            continue
        if isinstance(manifest, dict):
            found.append(_info(path, manifest))
    return sorted(found, key=lambda b: (b.created_at, b.name), reverse=True)


def backup_prune(*, keep: int) -> list[str]:
    """Delete the oldest ordinary backups beyond `keep`; pre-restore backups and foreign folders are never touched."""
    ordinary = [b for b in backup_list() if b.restorable and not b.reason.startswith(PRE_RESTORE)]
    pruned = []
    for backup in ordinary[max(1, keep):]:
        shutil.rmtree(backup.path)
        pruned.append(backup.name)
        logger.info("Pruned backup %s (keeping %s)", backup.name, keep)
    return pruned


# ---------------------------------------------------------------------------
# Verify and restore
# ---------------------------------------------------------------------------

def backup_verify(*, path: Path) -> tuple[list[MemoryFile], Path | None]:
    """A backup's files (and its index snapshot, if any) after checking every sha256; raises ValidationFailed."""
    where = f"Backup {path.name}"
    try:
        manifest = json.loads((path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationFailed(f"{where}: unreadable {MANIFEST} ({exc})") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != BACKUP_FORMAT:
        raise ValidationFailed(f"{where} has no file hashes (an original Ormah backup?); use `ormah import {path}`")
    files = files_verify(entries=manifest.get("files"), files={f.rel: f for f in memory_folder_files(path)},
                         where=where)
    index = manifest.get("index")
    if not isinstance(index, dict):
        return files, None
    snapshot = path / INDEX_FILE
    if not snapshot.is_file() or _file_sha256(snapshot) != index.get("sha256"):
        raise ValidationFailed(f"{where} failed verification: {INDEX_FILE}: missing or sha256 mismatch; "
                               "nothing was changed")
    return files, snapshot


def backup_restore(*, name: str) -> RestoreReport:
    """Replace the memory with a verified backup; the current memory goes aside into a pre-restore backup.

    Raises ValidationFailed (unknown or damaged backup, nothing changed) or StorageError (the restore failed
    part-way; the message names the pre-restore backup that holds the memory as it was).
    """
    conf, bconf = get_conf(), backup_conf()
    source = _locate(bconf.folder, name)
    now = utcnow()
    with exclusive(conf):
        files, snapshot = backup_verify(path=source)
        pre = _snapshot(root=conf.memory_dir, folder=bconf.folder, name=f"{now.strftime(NAME_FORMAT)}_{PRE_RESTORE}",
                        reason=f"{PRE_RESTORE} of {source.name}", now=now, move=True)
        try:
            _write_files(conf.memory_dir, files)
            restored = snapshot is not None and _index_restore(snapshot)
            sync = index_sync(full=not restored)
        except (OrmahError, OSError, DatabaseError) as exc:
            raise StorageError(f"Restoring {source.name} failed: {exc}; the memory as it was is in backup "
                               f"{pre.name}", details={"pre_restore": str(pre.path)}) from exc
    logger.info("Restored backup %s; the previous memory is in %s", source.name, pre.name)
    return RestoreReport(name=source.name, pre_restore=pre.name, counts=file_counts(files),
                         index="snapshot" if restored else "rebuilt", sync=sync)


# ---------------------------------------------------------------------------
# Internals
# ---------------------------------------------------------------------------

def _snapshot(*, root: Path, folder: Path, name: str, reason: str, now: datetime, move: bool) -> BackupInfo:
    """Index snapshot plus the memory files (copied, or moved when `move`) into a new backup folder."""
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(dir=folder, prefix=".tmp-"))
    except OSError as exc:
        raise StorageError(f"Cannot write backups to {folder}: {exc.strerror or exc}") from exc
    moved: list[str] = []
    try:
        index_sha = _index_copy(staging / INDEX_FILE)
        if move:
            _move_aside(root, staging, moved)
            files = memory_folder_files(staging)
        else:
            files = memory_folder_files(root)
            _write_files(staging, files)
        manifest = {"format": BACKUP_FORMAT, "version": BACKUP_VERSION, "created_at": format_timestamp(now),
                    "reason": reason, "counts": file_counts(files), "files": file_entries(files),
                    "index": {"path": INDEX_FILE, "sha256": index_sha} if index_sha else None}
        _private_file(staging / MANIFEST)
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        target = _free_dir(folder, name)
        os.rename(staging, target)
    except BaseException as exc:
        # Trigger: the snapshot failed. Why: a half backup must not look complete, and moved files must go home.
        # Outcome: moved files return to the memory folder; the staging folder is removed only once they have.
        try:
            for child in reversed(moved):
                shutil.move(staging / child, root / child)
        except OSError:
            logger.error("Could not move the memory back; its files are in %s", staging)
            raise
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(exc, OSError):
            raise StorageError(f"Cannot write backup {name} to {folder}: {exc.strerror or exc}") from exc
        raise
    logger.info("Backup %s: %s (%s)", target.name, manifest["counts"], reason)
    return _info(target, manifest)


def _move_aside(root: Path, staging: Path, moved: list[str]) -> None:
    """Move the memory folder's contents into `staging`, recording each move in `moved`.

    nodes/ and deleted/ stay in place and only their files move: the running watcher keeps watching nodes/.
    """
    for child in sorted(os.listdir(root)) if root.is_dir() else []:
        if child in MEMORY_FOLDERS and (root / child).is_dir() and not (root / child).is_symlink():
            (staging / child).mkdir(mode=0o700)
            for name in sorted(os.listdir(root / child)):
                shutil.move(root / child / name, staging / child / name)
                moved.append(f"{child}/{name}")
        else:
            shutil.move(root / child, staging / child)
            moved.append(child)


def _private_file(path: Path) -> None:
    """Create `path` empty and 0600 (whatever the umask), like every memory file and the live index: the index copy
    and the manifest then keep that mode (SQLite opens an empty file as a new database and gives its journal the
    file's mode)."""
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600))


def _index_copy(dest: Path) -> str | None:
    """The engine's copy of the live index into `dest` and its sha256; None when the engine keeps no index file
    (PostgreSQL: pg_dump backs the database up, and a restore rebuilds the index from the files)."""
    _private_file(dest)
    if backend().index_copy(dest):
        return _file_sha256(dest)
    dest.unlink()
    return None


def _index_restore(snapshot: Path) -> bool:
    """Copy a snapshot over the live index when both have the same migrations; False means rebuild instead."""
    return backend().index_restore(snapshot)


def _write_files(root: Path, files: list[MemoryFile]) -> None:
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    for f in files:
        folder = root / f.folder
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        # 0600 like every memory file (docs/security.md), not the umask's mode; a file left there is truncated
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        with os.fdopen(os.open(folder / f.name, flags, 0o600), "wb") as fh:
            os.fchmod(fh.fileno(), 0o600)
            fh.write(f.data)
            fh.flush()
            os.fsync(fh.fileno())
        if f.mtime_ns is not None:
            os.utime(folder / f.name, ns=(f.mtime_ns, f.mtime_ns))


def _locate(folder: Path, name: str) -> Path:
    given = Path(name).expanduser()
    path = given if given.is_absolute() or len(given.parts) > 1 else folder / name
    if name in ("", ".", "..") or not (path / MANIFEST).is_file():
        raise ValidationFailed(f"No backup {name!r} in {folder} (see `ormah backup --list`)")
    return path


def _free_dir(folder: Path, name: str) -> Path:
    path, n = folder / name, 2
    while os.path.lexists(path):
        path, n = folder / f"{name}-{n}", n + 1
    return path


def _file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _info(path: Path, manifest: dict) -> BackupInfo:
    counts = manifest.get("counts")
    return BackupInfo(name=path.name, path=path, created_at=str(manifest.get("created_at", "")),
                      reason=str(manifest.get("reason", "")), counts=counts if isinstance(counts, dict) else {},
                      restorable=manifest.get("format") == BACKUP_FORMAT)
