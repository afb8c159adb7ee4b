"""Recovering the files a killed write left renamed aside (`.ormah_aside.<name>.<random>.tmp`), from memory.files.

Called only through the write door (memory.writes), under the write lock. No Django.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from memory.atomic import _keep, discard, fsync_folder, link_new, storage_error
from memory.files import _peek, _same_node
from memory.store import TEMP_PREFIX, TEMP_SUFFIX, MarkdownStore, stale_temps

__all__ = ["SetAside", "put_back_set_aside", "remove_stale_temps"]


_ASIDE = re.compile(re.escape(f"{TEMP_PREFIX}aside.") + r"(?P<name>.+)\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX) + r"\Z")


@dataclass(frozen=True)
class SetAside:
    """One file a killed write had renamed aside, and what became of it: "restored" (linked back to `dest`),
    "discarded" (the same node is in its live file or tombstone) or "kept" (moved to conflicts/ as `dest`)."""

    path: Path
    outcome: str
    dest: Path | None = None


def put_back_set_aside(store: MarkdownStore) -> list[SetAside]:
    """Recover the files a write killed mid-way left renamed aside (`.ormah_aside.<name>.<random>.tmp`).

    A soft delete, a guarded removal or the portable guarded write renames the live file aside before its next
    step; a SIGKILL in between leaves the node only in that hidden file, which the store ignores. For each one, in
    nodes/ and deleted/: when no live file and no tombstone hold its node, it is linked back under its own name
    (kept in conflicts/ if that name was taken meanwhile); when one of them holds the same node (a tombstone only
    differs by `deleted_at`: the delete got as far as the discard) it is discarded; otherwise (a different version
    was written meanwhile, or the file does not parse) it is kept in conflicts/. An aside whose content exists
    nowhere else is never deleted. Must run under the write lock: then no live write has a file aside.
    Raises StorageError when the disk refuses.
    """
    done: list[SetAside] = []
    for folder in (store.nodes_dir, store.deleted_dir):
        try:
            names = sorted(e.name for e in os.scandir(folder)
                           if _ASIDE.match(e.name) and e.is_file(follow_symlinks=False))
        except FileNotFoundError:
            continue
        for name in names:
            done.append(_recover_aside(store, folder / name, folder / _ASIDE.match(name)["name"]))
    return done


def _recover_aside(store: MarkdownStore, hold: Path, target: Path) -> SetAside:
    node = _peek(store, hold)
    if node is None and not os.path.lexists(hold):
        return SetAside(path=hold, outcome="discarded")
    copies = [] if node is None else [p for p in (store.path_for(node.id), store._find(store.deleted_dir, node.id))
                                      if p is not None]
    if node is not None and not copies:
        if not link_new(hold, target):
            return SetAside(path=hold, outcome="kept", dest=_keep(store, hold, target, "aside"))
        fsync_folder(target.parent, target)
        discard(hold)
        return SetAside(path=hold, outcome="restored", dest=target)
    if node is not None and any(_same_node(store, p, node) for p in copies):
        discard(hold)
        return SetAside(path=hold, outcome="discarded")
    return SetAside(path=hold, outcome="kept", dest=_keep(store, hold, target, "aside"))


def remove_stale_temps(store: MarkdownStore, *, now: float, older_than: float | None = None) -> list[Path]:
    """Remove the stale temp files (`stale_temps`); returns them. Their write was killed before its rename, so it
    never took effect (nor answered): a temp file is not a memory. Raises StorageError when the disk refuses."""
    found = stale_temps(store, now=now, older_than=older_than)
    for path in found:
        try:
            discard(path)
        except OSError as exc:
            raise storage_error(exc, path) from exc
    return found
