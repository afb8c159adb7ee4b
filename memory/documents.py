"""The documents store on PostgreSQL: every memory file's exact bytes and its versions, shared by every app host.

On SQLite nothing here runs (`enabled()` is False): the folder is the truth. On PostgreSQL the documents tables
(memory.docstore, an app installed only there) are the canonical store and each host's folder under $ORMAH_HOME
is a cache of them (docs/architecture.md, "Several hosts"):

- the write door records every file it changed (`record_paths`) in the same transaction as the index rows, and
  holds a session advisory lock (`host_lock`) for the whole unit, so two hosts never interleave a unit;
- at the start of each unit the door brings the host's folder in step with what other hosts wrote since this host
  last looked (memory.writes.pull, from `changed_since` and the host's watermark);
- every index sync first records what differs in the host's own folder (`record_folder`): a hand edit, a hand
  delete, a file a killed write left without its rows; so the index and the store always agree.

Paths are relative to the memory folder and only `nodes/*.md` and `deleted/*.md` are stored (as in an export);
conflict copies stay on the host that made them. No file is written here (that is memory.writes' job).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from django.db import connection, transaction
from django.db.models import Max
from django.db.models.functions import Length

from memory.backends import postgres
from memory.domain.markdown import parse
from memory.domain.node import utcnow
from memory.docstore.models import DocumentRow, DocumentVersionRow
from memory.errors import MalformedNodeFile, StorageError
from memory.store import DELETED_DIR, MAX_READ_BYTES, NODES_DIR, MarkdownStore, content_hash

FOLDERS = (NODES_DIR, DELETED_DIR)
WATERMARK = ".documents.seq"  # in $ORMAH_HOME beside the write lock (a restore replaces the memory folder's files)


@dataclass(frozen=True)
class Document:
    """One stored file: `path` under the memory folder, its bytes and the file's modification time."""

    path: str
    node_id: str
    body: bytes
    sha256: str
    mtime_ns: int
    seq: int


def enabled() -> bool:
    """True when the documents table is the canonical store (the engine is PostgreSQL)."""
    return connection.vendor == "postgresql"


@contextmanager
def host_lock() -> Iterator[None]:
    """Serialise write units across hosts (a session advisory lock on PostgreSQL; nothing on SQLite)."""
    if not enabled():
        yield
        return
    postgres.advisory_lock()
    try:
        yield
    finally:
        postgres.advisory_unlock()


def valid_path(rel: str) -> bool:
    """`nodes/<name>.md` or `deleted/<name>.md`, nothing else (a stored path never leaves the memory folder)."""
    parts = PurePosixPath(rel).parts
    return (len(parts) == 2 and parts[0] in FOLDERS and parts[1].endswith(".md") and not parts[1].startswith(".")
            and "\\" not in rel and ".." not in parts)


def rel_of(store: MarkdownStore, path: Path) -> str | None:
    """The stored path of a file under the memory folder, None for anything the store does not hold."""
    try:
        rel = PurePosixPath(Path(path).relative_to(store.root)).as_posix()
    except ValueError:
        return None
    return rel if valid_path(rel) else None


def _document(row: DocumentRow) -> Document:
    return Document(path=row.path, node_id=row.node_id, body=bytes(row.body), sha256=row.sha256,
                    mtime_ns=row.mtime_ns, seq=row.seq)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------

def document_get(*, path: str) -> Document | None:
    """The stored file at `path`, None when the store does not hold it."""
    row = DocumentRow.objects.filter(path=path).first()
    return None if row is None else _document(row)


def documents_all() -> list[Document]:
    """Every stored file, sorted by path (an export's content)."""
    return [_document(r) for r in DocumentRow.objects.order_by("path").iterator(chunk_size=500)]


def latest_seq() -> int:
    """The newest version's sequence number (0 for an empty store)."""
    return DocumentVersionRow.objects.aggregate(m=Max("seq"))["m"] or 0


def changed_since(*, seq: int) -> list[tuple[str, Document | None]]:
    """Each path with a version newer than `seq`, with what the store holds there now (None: removed), by path."""
    paths = sorted(set(DocumentVersionRow.objects.filter(seq__gt=seq).values_list("path", flat=True)))
    held = {r.path: _document(r) for r in DocumentRow.objects.filter(path__in=paths)}
    return [(p, held.get(p)) for p in paths if valid_path(p)]


def hashes_of(*, path: str) -> set[str]:
    """Every sha256 the store ever held at `path` (its versions)."""
    return set(DocumentVersionRow.objects.filter(path=path).exclude(sha256="").values_list("sha256", flat=True))


def watermark_get(home: Path) -> int:
    """The newest version this host's folder is known to hold (0: none, fetch everything)."""
    try:
        return int((home / WATERMARK).read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def watermark_set(home: Path, seq: int) -> None:
    """Record that the host's folder holds every version up to `seq` (written under the write lock)."""
    target = home / WATERMARK
    tmp = target.with_name(f"{WATERMARK}.{os.getpid()}.tmp")
    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp.write_text(f"{seq}\n")
        os.replace(tmp, target)
    except OSError as exc:
        raise StorageError(f"Cannot write {target}: {exc.strerror or exc}", details={"path": str(target)}) from exc


# ---------------------------------------------------------------------------
# Recording what a host's folder holds
# ---------------------------------------------------------------------------

def record(*, path: str, body: bytes | None, node_id: str = "", mtime_ns: int = 0) -> int | None:
    """Store `body` at `path` as its next version (None: the path is removed); returns the new version's seq, or
    None when the store already holds exactly that (bytes and modification time). Runs in the caller's transaction
    (the write door's index transaction) when there is one; the caller holds the host lock."""
    with transaction.atomic(savepoint=False):
        row = DocumentRow.objects.filter(path=path).first()
        if row is None and body is None:
            return None
        if row is not None and body is not None and row.mtime_ns == mtime_ns and bytes(row.body) == body:
            return None
        version = 1 + (row.version if row is not None else
                       DocumentVersionRow.objects.filter(path=path).aggregate(m=Max("version"))["m"] or 0)
        digest = "" if body is None else content_hash(body)
        seq = DocumentVersionRow.objects.create(path=path, node_id=node_id, version=version, body=body,
                                                sha256=digest, mtime_ns=mtime_ns, changed=utcnow()).seq
        if body is None:
            row.delete()
        elif row is None:
            DocumentRow.objects.create(path=path, node_id=node_id, body=body, sha256=digest, mtime_ns=mtime_ns,
                                       version=version, seq=seq)
        else:
            DocumentRow.objects.filter(path=path).update(node_id=node_id, body=body, sha256=digest,
                                                         mtime_ns=mtime_ns, version=version, seq=seq)
        return seq


def record_paths(store: MarkdownStore, paths: Iterable[Path]) -> int:
    """Store what each of these files holds now (a missing file: removed); returns how many versions were added."""
    added = 0
    for path in sorted({Path(p) for p in paths}):
        rel = rel_of(store, path)
        if rel is None:
            continue
        body, mtime_ns, node_id = _local(path)
        added += record(path=rel, body=body, node_id=node_id, mtime_ns=mtime_ns) is not None
    return added


def record_folder(store: MarkdownStore) -> int:
    """Store every file of the host's folder that differs from the store, and remove what the folder no longer
    holds (a hand edit or delete on this host; the door's pull has already brought in other hosts' changes).
    A file whose size and modification time match its stored version is not read. Returns the versions added."""
    stamps = {p: (m, s) for p, m, s in DocumentRow.objects.annotate(size=Length("body"))
              .values_list("path", "mtime_ns", "size")}
    local: dict[str, Path] = {}
    for path in [*store.iter_paths(), *store.deleted_paths()]:
        rel = rel_of(store, path)
        if rel is not None and not path.is_symlink():
            local[rel] = path
    changed = []
    for rel, path in local.items():
        try:
            st = path.stat()
        except FileNotFoundError:
            continue
        if stamps.get(rel) != (st.st_mtime_ns, st.st_size):
            changed.append(path)
    changed += [store.root / rel for rel in stamps if rel not in local]
    with transaction.atomic():
        return record_paths(store, changed)


def _local(path: Path) -> tuple[bytes | None, int, str]:
    """(bytes, mtime_ns, node id or "") of a file as it is now; (None, 0, "") when there is none."""
    try:
        if path.is_symlink():
            return None, 0, ""
        body, st = path.read_bytes(), path.stat()
    except FileNotFoundError:
        return None, 0, ""
    except OSError as exc:
        raise StorageError(f"Cannot read {path}: {exc.strerror or exc}", details={"path": str(path)}) from exc
    return body, st.st_mtime_ns, _node_id(body, path)


def _node_id(body: bytes, path: Path) -> str:
    """The id a file's bytes hold, "" for a file that does not parse (parsed here, so the store's caches of what
    it has read and reported stay as they are)."""
    if len(body) > MAX_READ_BYTES:
        return ""
    try:
        return parse(body.decode("utf-8"), source=str(path)).id
    except (UnicodeDecodeError, MalformedNodeFile):
        return ""
