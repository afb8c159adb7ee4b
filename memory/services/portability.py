"""Export the memory to a portable archive, and import archives, Ormah memory folders and plain markdown folders.

An export is a .tar.gz or .zip holding `manifest.json` and the memory folder's `nodes/*.md` and `deleted/*.md`,
byte for byte (on PostgreSQL, the documents store's; an import into a PostgreSQL store fills it through the write
door). Reading an archive never extracts it: every member is checked (no absolute paths, no `..`, no
links or devices, nothing the manifest does not list, every sha256 matching) before a single file is written.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from memory import documents, runtime
from memory.conf import get_conf
from memory.domain.markdown import format_timestamp
from memory.domain.node import utcnow
from memory.errors import StorageError, ValidationFailed
from memory.services.importing import (
    MEMORY_FOLDERS,
    ImportReport,
    MemoryFile,
    memory_folder_files,
    node_files_import,
    notes_import,
    valid_file_name,
)
from memory.writes import exclusive
from memory.store import NODES_DIR

EXPORT_FORMAT = "ormah-export"
EXPORT_VERSION = 1
MANIFEST = "manifest.json"
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_ARCHIVE_BYTES = 1024 * 1024 * 1024


@dataclass(frozen=True)
class ExportReport:
    path: Path
    counts: dict

    def as_dict(self) -> dict:
        return {"path": str(self.path), "counts": self.counts}


# ---------------------------------------------------------------------------
# Manifests (shared with backups)
# ---------------------------------------------------------------------------

def file_entries(files: list[MemoryFile]) -> list[dict]:
    """Manifest rows: path, sha256, size and mtime_ns of each file."""
    return [{"path": f.rel, "sha256": f.sha256, "size": len(f.data), "mtime_ns": f.mtime_ns} for f in files]


def file_counts(files: list[MemoryFile]) -> dict:
    """How many files each memory folder holds: {"nodes": n, "deleted": m}."""
    return {folder: sum(f.folder == folder for f in files) for folder in MEMORY_FOLDERS}


def files_verify(*, entries: object, files: dict[str, MemoryFile], where: str) -> list[MemoryFile]:
    """The files in manifest order, with their recorded mtimes, after checking the set and every sha256.

    Raises ValidationFailed naming the first problems: a malformed entry, a missing or unlisted file, a hash mismatch.
    """
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("path"), str)
                                                and isinstance(e.get("sha256"), str) for e in entries):
        raise ValidationFailed(f"{where}: the manifest's file list is malformed")
    listed = {e["path"]: e for e in entries}
    problems = [f"{p}: missing" for p in listed if p not in files]
    problems += [f"{p}: not in the manifest" for p in files if p not in listed]
    problems += [f"{p}: sha256 mismatch" for p, e in listed.items() if p in files and files[p].sha256 != e["sha256"]]
    if problems:
        more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
        raise ValidationFailed(f"{where} failed verification: {'; '.join(problems[:5])}{more}; nothing was changed")
    out = []
    for path, entry in listed.items():
        mtime = entry.get("mtime_ns")
        out.append(MemoryFile(files[path].folder, files[path].name, files[path].data,
                              mtime if isinstance(mtime, int) else None, files[path].origin))
    return out


def member_path(name: str) -> tuple[str, str] | None:
    """(folder, file name) of an archive member, None for the manifest; raises ValidationFailed otherwise."""
    parts = _safe_parts(name)
    if parts == (MANIFEST,):
        return None
    if len(parts) == 2 and parts[0] in MEMORY_FOLDERS and valid_file_name(parts[1]):
        return parts[0], parts[1]
    raise ValidationFailed(f"Refusing archive member {name!r}: not a memory file")


def _safe_parts(name: str) -> tuple[str, ...]:
    if name.startswith(("/", "\\")) or "\\" in name or (len(name) > 1 and name[1] == ":"):
        raise ValidationFailed(f"Refusing archive member {name!r}: absolute path")
    parts = PurePosixPath(name.removeprefix("./")).parts
    if ".." in parts:
        raise ValidationFailed(f"Refusing archive member {name!r}: path traversal")
    return parts


# ---------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------

def memory_export(*, path: Path, now: datetime | None = None) -> ExportReport:
    """Write every node file and tombstone, with a manifest, to a new .tar.gz or .zip at `path`.

    The files are read under the write lock, so the export is one consistent moment. Raises ValidationFailed for
    an unknown suffix, an existing target or a missing folder; StorageError when the disk refuses.
    """
    path = Path(path).expanduser()
    kind = _archive_kind(path)
    if kind is None:
        raise ValidationFailed(f"{path.name}: the export must end in .tar.gz, .tgz or .zip")
    if os.path.lexists(path):
        raise ValidationFailed(f"{path} already exists; choose a new file name")
    if not path.parent.is_dir():
        raise ValidationFailed(f"{path.parent} is not a folder")
    conf = get_conf()
    with exclusive(conf):
        files = _exported_files(runtime.store(conf).root)
    manifest = {"format": EXPORT_FORMAT, "version": EXPORT_VERSION,
                "exported_at": format_timestamp(now or utcnow()), "counts": file_counts(files),
                "files": file_entries(files)}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            (_write_zip if kind == "zip" else _write_tar)(fh, manifest, files)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        raise StorageError(f"Cannot write {path}: {exc.strerror or exc}", details={"path": str(path)}) from exc
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return ExportReport(path=path, counts=manifest["counts"])


def _exported_files(root: Path) -> list[MemoryFile]:
    """The memory folder's files; on PostgreSQL the documents store's, the canonical copy every host shares (same
    paths, bytes and modification times as a host's folder in step with it)."""
    if not documents.enabled():
        return memory_folder_files(root)
    held = [d for d in documents.documents_all() if d.path.split("/")[0] in MEMORY_FOLDERS]
    files = [MemoryFile(*d.path.split("/"), d.body, d.mtime_ns, f"documents:{d.path}") for d in held]
    return sorted(files, key=lambda f: (MEMORY_FOLDERS.index(f.folder), f.name))


def _archive_kind(path: Path) -> str | None:
    name = path.name.lower()
    return "zip" if name.endswith(".zip") else "tar" if name.endswith((".tar.gz", ".tgz")) else None


def _write_tar(fh, manifest: dict, files: list[MemoryFile]) -> None:
    with tarfile.open(fileobj=fh, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, data, mtime_ns in [(MANIFEST, _json(manifest), None), *((f.rel, f.data, f.mtime_ns) for f in files)]:
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            info.mtime = mtime_ns / 1e9 if mtime_ns else utcnow().timestamp()
            tar.addfile(info, io.BytesIO(data))


def _write_zip(fh, manifest: dict, files: list[MemoryFile]) -> None:
    with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, _json(manifest))
        for f in files:
            stamp = datetime.fromtimestamp((f.mtime_ns or 0) / 1e9).timetuple()[:6]
            info = zipfile.ZipInfo(f.rel, date_time=max(stamp, (1980, 1, 1, 0, 0, 0)))
            info.compress_type, info.external_attr = zipfile.ZIP_DEFLATED, 0o100600 << 16
            zf.writestr(info, f.data)


def _json(data: dict) -> bytes:
    return (json.dumps(data, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------

def memory_import(*, path: Path, space: str | None = None, progress=None) -> ImportReport:
    """Import an export archive, an Ormah memory folder (it has `nodes/`) or a plain markdown folder.

    Ormah node files keep their ids, names, spaces and mtimes (`space` applies only to plain notes); ids that
    already exist are skipped. Raises ValidationFailed for a missing path or a refused, corrupt or tampered
    archive, before anything is written.
    """
    path = Path(path).expanduser()
    if not path.exists():
        raise ValidationFailed(f"{path} does not exist")
    if path.is_file():
        return node_files_import(files=archive_read(path))
    if (path / NODES_DIR).is_dir():
        return node_files_import(files=memory_folder_files(path))
    return notes_import(folder=path, space=space, progress=progress)


def archive_read(path: Path) -> list[MemoryFile]:
    """The verified files of an export archive; raises ValidationFailed for anything unsafe, corrupt or tampered."""
    try:
        if zipfile.is_zipfile(path):
            members = _zip_members(path)
        elif tarfile.is_tarfile(path):
            members = _tar_members(path)
        else:
            raise ValidationFailed(f"{path} is neither a .tar.gz nor a .zip archive")
        manifest = json.loads(members.pop(MANIFEST).decode("utf-8")) if MANIFEST in members else None
    except (tarfile.TarError, zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, zlib.error, OSError,
            UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValidationFailed(f"{path} is a corrupt archive: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
        raise ValidationFailed(f"{path} has no Ormah {MANIFEST}; it is not an Ormah export")
    version = manifest.get("version")
    if not isinstance(version, int) or version > EXPORT_VERSION:
        raise ValidationFailed(f"{path} is export format version {version}; this Ormah reads up to {EXPORT_VERSION}")
    files = {}
    for name, data in members.items():
        folder, file_name = member_path(name)
        files[f"{folder}/{file_name}"] = MemoryFile(folder, file_name, data, None, f"{path.name}:{name}")
    return files_verify(entries=manifest.get("files"), files=files, where=str(path))


def _zip_members(path: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        infos = zf.infolist()
        for info in infos:
            mode = info.external_attr >> 16
            if (mode & 0o170000) not in (0, 0o100000, 0o040000):
                raise ValidationFailed(f"Refusing archive member {info.filename!r}: a link or special file")
            _safe_parts(info.filename)
            if not info.is_dir():
                member_path(info.filename)
        _check_sizes([(i.filename, i.file_size) for i in infos if not i.is_dir()])
        return {i.filename.removeprefix("./"): zf.read(i) for i in infos if not i.is_dir()}


def _tar_members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, "r:*") as tar:
        infos = tar.getmembers()
        for info in infos:
            if not (info.isfile() or info.isdir()):
                raise ValidationFailed(f"Refusing archive member {info.name!r}: a link or special file")
            _safe_parts(info.name)
            if info.isfile():
                member_path(info.name)
        _check_sizes([(i.name, i.size) for i in infos if i.isfile()])
        out = {}
        for info in infos:
            if info.isfile():
                out[info.name.removeprefix("./")] = tar.extractfile(info).read()
        return out


def _check_sizes(sizes: list[tuple[str, int]]) -> None:
    for name, size in sizes:
        if size > MAX_MEMBER_BYTES:
            raise ValidationFailed(f"Refusing archive member {name!r}: {size} bytes is over {MAX_MEMBER_BYTES}")
    if sum(size for _, size in sizes) > MAX_ARCHIVE_BYTES:
        raise ValidationFailed(f"Refusing archive: more than {MAX_ARCHIVE_BYTES} bytes uncompressed")
    names = [name.removeprefix("./") for name, _ in sizes]
    if len(names) != len(set(names)):
        raise ValidationFailed("Refusing archive: a member appears twice")
