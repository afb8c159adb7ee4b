"""Import memories: Ormah node files (live and tombstones) keep their ids and names; plain notes become new memories.

Every source (an export archive, an Ormah memory folder, a plain markdown folder) is reduced to `MemoryFile`s;
`node_files_import` is the one writer for node files. Ids that already exist, live or forgotten, are skipped and
reported, so importing the same thing twice changes nothing.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path


from memory.domain.enums import EdgeType, Tier
from memory.domain.identity import is_self_node
from memory.domain.markdown import parse
from memory.domain.node import Node, utcnow, with_connection
from memory.errors import MalformedNodeFile, OrmahError, StorageError, ValidationFailed
from memory.index import SyncReport
from memory.models import NodeRow
from memory.services.indexing import index_sync
from memory.services.tiers import core_cap_enforce
from memory.services.note_import import vault_import
from memory.node_bytes import parse_bytes
from memory.store import DELETED_DIR, NODES_DIR, MarkdownStore, content_hash
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger(__name__)
_TAIL = re.compile(r"_[0-9a-f]{8}\.md\Z")
MEMORY_FOLDERS = (NODES_DIR, DELETED_DIR)


@dataclass(frozen=True)
class MemoryFile:
    """One file of a memory folder: `folder` is nodes or deleted, `name` a bare file name, `origin` for reports."""

    folder: str
    name: str
    data: bytes
    mtime_ns: int | None = None
    origin: str = ""

    @property
    def rel(self) -> str:
        return f"{self.folder}/{self.name}"

    @property
    def sha256(self) -> str:
        return content_hash(self.data)


@dataclass
class ImportReport:
    imported: list[str] = field(default_factory=list)
    forgotten: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    index: SyncReport | None = None
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    links: int = 0
    unresolved: list[tuple[str, str]] = field(default_factory=list)

    def merge(self, other: ImportReport) -> ImportReport:
        self.imported += other.imported
        self.forgotten += other.forgotten
        self.skipped += other.skipped
        self.index = other.index or self.index
        return self

    def as_dict(self) -> dict:
        return {"imported": len(self.imported), "forgotten": len(self.forgotten), "updated": len(self.updated),
                "unchanged": self.unchanged, "links": self.links,
                "duplicates": [{"path": p, "reason": r} for p, r in self.duplicates],
                "unresolved_links": [{"note": n, "target": t} for n, t in self.unresolved],
                "skipped": [{"path": p, "reason": r} for p, r in self.skipped]}


def valid_file_name(name: str) -> bool:
    """A bare `*.md` name that is not hidden and names no other folder."""
    return name.endswith(".md") and not name.startswith(".") and "/" not in name and "\\" not in name


def memory_folder_files(root: Path) -> list[MemoryFile]:
    """The node files and tombstones of a memory folder (`nodes/*.md`, `deleted/*.md`), sorted by path; symbolic
    links are left out, never followed (as everywhere: docs/file-format.md)."""
    store = MarkdownStore(root)
    files = []
    for folder, paths in ((NODES_DIR, store.iter_paths()), (DELETED_DIR, store.deleted_paths())):
        for path in paths:
            if path.is_symlink():
                continue
            try:
                data, st = path.read_bytes(), path.stat()
            except OSError as exc:
                raise StorageError(f"Cannot read {path}: {exc.strerror or exc}", details={"path": str(path)}) from exc
            files.append(MemoryFile(folder, path.name, data, st.st_mtime_ns, str(path)))
    return files


# ---------------------------------------------------------------------------
# Ormah node files
# ---------------------------------------------------------------------------

def node_files_import(*, files: list[MemoryFile]) -> ImportReport:
    """Write node files and tombstones under their own ids, names and mtimes, then index them.

    Existing ids are skipped. An incoming self node, when this memory already has one, is not written: its
    `defines` connections are added to the existing self node. Imported core memories stay in core; the core cap
    demotes older ones if it must (as remember). Raises StorageError when the disk refuses.
    """
    report = ImportReport()
    with write_unit() as unit:
        known, me = _known_ids(unit.store)
        defines: list = []
        for f in files:
            origin = f.origin or f.rel
            try:
                node = parse_bytes(f.data, origin)  # what the store would read as malformed is not written into it
            except MalformedNodeFile as exc:
                report.skipped.append((origin, exc.reason))
                continue
            if node.id in known:
                report.skipped.append((origin, f"memory {node.id} already exists"))
                continue
            live = f.folder == NODES_DIR
            if live and me is not None and is_self_node(node):
                defines += [c for c in node.connections if c.edge == EdgeType.DEFINES]
                report.skipped.append((origin, f"a second self node; its identity links were added to {me}"))
                continue
            try:
                _write(unit, node, f, live=live)
            except StorageError:
                raise
            except OrmahError as exc:
                report.skipped.append((origin, exc.message))
                continue
            known.add(node.id)
            (report.imported if live else report.forgotten).append(node.id)
            if live and me is None and is_self_node(node):
                me = node.id
        if defines and me is not None:
            _self_link(unit, me, defines)
        if report.imported or defines:
            report.index = index_sync()
            _core_cap_keeping(report.imported)
    return report


def _core_cap_keeping(imported: list[str]) -> None:
    """Keep the core cap as remember does: the memories this import wrote into core stay there (their tier is in
    their files), the least important older core memories are demoted when core is over the cap."""
    kept = set(NodeRow.objects.filter(uid__in=imported, tier=Tier.CORE, is_self=False).values_list("uid", flat=True))
    if kept:
        core_cap_enforce(keep=kept)


def _known_ids(store: MarkdownStore) -> tuple[set[str], str | None]:
    """Ids held by live files, tombstones or index rows, and the self node's id (the oldest, if several)."""
    known = set(NodeRow.objects.values_list("uid", flat=True))
    selves: list[Node] = []
    for item in store.scan():
        if item.node is not None:
            known.add(item.node.id)
            if is_self_node(item.node):
                selves.append(item.node)
    for path in store.deleted_paths():
        try:
            known.add(store.read(path)[0].id)
        except (OSError, OrmahError):
            continue
    selves.sort(key=lambda n: (n.created, n.id))
    return known, selves[0].id if selves else None


def _write(unit: WriteUnit, node: Node, f: MemoryFile, *, live: bool) -> None:
    folder = unit.store.nodes_dir if live else unit.store.deleted_dir
    if not live and node.deleted_at is None:
        node = replace(node, deleted_at=utcnow())
    name = f.name if valid_file_name(f.name) else f"{node.type}_{node.short_id}.md"
    # Not staged: the import ends with one incremental sync of the folder, which indexes them all in batches.
    unit.save(node, path=_free(folder, name), mtime_ns=f.mtime_ns, index=False)


def _free(folder: Path, name: str) -> Path:
    """`folder/name`, or with -2, -3, ... before the `_<short_id>.md` tail when the name is taken."""
    if not os.path.lexists(folder / name):
        return folder / name
    tail = _TAIL.search(name)
    base, end = (name[: tail.start()], name[tail.start():]) if tail else (name[:-3], ".md")
    n = 2
    while os.path.lexists(folder / f"{base}-{n}{end}"):
        n += 1
    return folder / f"{base}-{n}{end}"


def _self_link(unit: WriteUnit, self_id: str, connections: list) -> None:
    store = unit.store
    path = store.path_for(self_id)
    if path is None:
        return
    node, stored = store.read(path)
    new = node
    for conn in connections:
        if conn.target != self_id:
            new = with_connection(new, conn)
    if new != node:
        unit.save(replace(new, updated=utcnow()), expected=stored, index=False)


# ---------------------------------------------------------------------------
# Plain markdown folders
# ---------------------------------------------------------------------------

def notes_import(*, folder: Path, space: str | None = None, progress=None) -> ImportReport:
    """Import every *.md under `folder`: node files keep their ids, plain notes become memories (once each).

    Plain notes go through memory.services.note_import: front matter kept, links as edges, duplicates skipped, an
    edited note updates the memory it made before; a note with `tier: core` stays in core and the core cap demotes
    older core memories if it must (as remember). Files that cannot be imported are reported and left untouched.
    Raises ValidationFailed for a missing folder.
    """
    folder = Path(folder).expanduser()
    if not folder.is_dir():
        raise ValidationFailed(f"{folder} is not a folder")
    report, node_files, plain = ImportReport(), [], []
    for path in sorted(folder.rglob("*.md")):
        if path.is_symlink():  # as in nodes/ and in archives: never followed (it may lead out of the folder)
            report.skipped.append((str(path), "a symbolic link: skipped, never followed"))
            continue
        try:
            data = path.read_bytes()
            text = data.decode("utf-8")
        except (UnicodeDecodeError, OSError) as exc:
            report.skipped.append((str(path), f"unreadable: {exc}"))
            continue
        try:
            parse(text, source=str(path))
        except MalformedNodeFile:
            plain.append((path, text.removeprefix("\ufeff")))  # a byte order mark would hide front matter and heading
        else:
            node_files.append(MemoryFile(NODES_DIR, path.name, data, path.stat().st_mtime_ns, str(path)))
    if node_files:
        report.merge(node_files_import(files=node_files))
    readable = []
    for path, text in plain:
        if text.strip():
            readable.append((path, text))
        else:
            report.skipped.append((str(path), "empty file"))
    if readable:
        notes = vault_import(folder=folder, paths=readable, space=space, progress=progress)
        report.imported += notes.imported
        report.updated += notes.updated
        report.unchanged += notes.unchanged
        report.duplicates += notes.duplicates
        report.links += notes.links
        report.unresolved += notes.unresolved
        report.skipped += notes.skipped
        if notes.imported or notes.updated:
            report.index = index_sync(progress=progress)
            _core_cap_keeping(report.imported)
    return report
