"""A batch of new node files, nameless until durable: written and fsynced while they have no name (memory.nameless:
O_TMPFILE), several at once, then linked under their names, never over a file; before the write lock where the
writer can (`prepare_new_nodes`, `Prepared`), under it otherwise (`write_new_nodes`).

Part of the node file writer (memory.files, whose rules hold here: only the write door, memory.writes, calls it; every
change is journalled for a rollback; no Django). Split from memory/files.py when the files prepared before the lock
took it past style.md's 400 lines (session 25).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence
from dataclasses import dataclass

from memory import nameless
from memory.domain.node import Node
from memory.domain.slug import node_filename
from memory.errors import PayloadTooLarge
from memory.files import Journal, encode_readable, note, write_node
from memory.store import _LAST_PATH, MarkdownStore, StoredFile, _free_path, _remember, _stored

__all__ = ["Prepared", "prepare_new_nodes", "write_new_nodes"]

_NEW_CHUNK = 64  # files open at once (a batch of 1,000 must not run out of descriptors)


@dataclass
class Prepared:
    """New node files written and fsynced before the write lock, still nameless (open descriptors, by node id, with
    the bytes each holds): `write_new_nodes` names the ones whose node still encodes to exactly those bytes. Close
    it when the write is done (`close`); a process killed before leaves nothing, named or not (O_TMPFILE)."""

    files: dict[str, tuple[bytes, int, os.stat_result]]

    def close(self) -> None:
        files, self.files = self.files, {}
        for _, fd, _ in files.values():
            os.close(fd)


def prepare_new_nodes(store: MarkdownStore, nodes: Sequence[Node]) -> Prepared:
    """The files `write_new_nodes` would create for `nodes`, written and fsynced now while nameless (memory.nameless),
    so a writer can pay their fsyncs before it takes the write lock. Empty (nothing written) where nameless files are
    not available, for more than one chunk of nodes, or for a node whose file would be too large. Raises
    StorageError."""
    if not nodes or len(nodes) > _NEW_CHUNK or not nameless.available():
        return Prepared({})
    try:
        encoded = [(node.id, encode_readable(node)) for node in nodes]
    except PayloadTooLarge:
        return Prepared({})
    opened = nameless.write_all(store.root, store.nodes_dir, [data for _, data in encoded])
    if opened is None:
        return Prepared({})
    return Prepared({node_id: (data, fd, st) for (node_id, data), (fd, st) in zip(encoded, opened, strict=True)})


def write_new_nodes(store: MarkdownStore, nodes: Sequence[Node], *, journal: Journal | None = None,
                    prepared: Prepared | None = None) -> list[StoredFile]:
    """Create the files of nodes whose ids were just minted, each under its standard name (or a free variant),
    never over a file; the caller fsyncs the folder (`sync_folders`) before anything counts on them.

    Each file is written and fsynced while it has no name (memory.nameless: O_TMPFILE), several at once, then
    linked under its name: a kill leaves only whole files and no temp file, and the fsyncs wait together instead
    of one after another. `prepared`: files written so before the lock (`prepare_new_nodes`); a node that encodes
    to exactly its prepared bytes gets the prepared file linked, no write and no fsync here. Where the file system
    or /proc cannot (no O_TMPFILE, no linkat), each goes through `write_node`. Raises StorageError (the files
    already linked are in the journal), ValidationFailed (text that cannot be encoded: before any file is written).
    """
    encoded = [(node, encode_readable(node)) for node in nodes]
    ready = prepared.files if prepared is not None else {}
    named: dict[int, StoredFile] = {}
    rest: list[tuple[int, Node, bytes]] = []
    for i, (node, data) in enumerate(encoded):
        if (found := ready.get(node.id)) is not None and found[0] == data:
            named[i] = _name_new(store, node, data, found[1], found[2], journal)
        else:
            rest.append((i, node, data))
    for start in range(0, len(rest), _NEW_CHUNK):
        chunk = rest[start:start + _NEW_CHUNK]
        opened = (nameless.write_all(store.root, store.nodes_dir, [data for _, _, data in chunk])
                  if nameless.available() else None)
        if opened is None:
            named.update((i, write_node(store, node, journal=journal, sync_folder=False)) for i, node, _ in chunk)
            continue
        try:
            for (i, node, data), (fd, st) in zip(chunk, opened):
                named[i] = _name_new(store, node, data, fd, st, journal)
        finally:
            for fd, _ in opened:
                os.close(fd)
    return [named[i] for i in range(len(encoded))]


def _name_new(store: MarkdownStore, node: Node, data: bytes, fd: int, st: os.stat_result,
              journal: Journal | None) -> StoredFile:
    target = _free_path(store.nodes_dir, node_filename(node))
    while err := nameless.link(fd, target):
        if err != errno.EEXIST:  # no /proc, or the disk refuses: the plain atomic write for this one
            return write_node(store, node, journal=journal, sync_folder=False)
        target = _free_path(store.nodes_dir, node_filename(node))  # taken meanwhile: never over a file
    _remember(target, st, node.id)
    _LAST_PATH[node.id] = target
    stored = _stored(target, data, st)
    note(journal, target, None, stored.hash)
    return stored
