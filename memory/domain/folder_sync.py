"""Reconciling a sync folder with the store: the plan (pure; `ormah sync PATH`, memory.services.folder_sync).

A sync folder (a git checkout, say) holds live memories as `nodes/*.md` in today's file format. Each memory is
matched by its id on three states: the folder's file, the store's live file, and the base (the bytes both held
at the last sync, from the folder's `.ormah-sync` state file). Whichever side differs from the base changed; the
rules (docs/team-server.md, "Syncing a folder"):

- changed on one side only: the other side takes its bytes (a removal forgets the memory, or removes the file);
- changed on both sides to different bytes: a conflict. The store's version stays and is written to the folder;
  the folder's version is kept in conflicts/ (the folder's and the store's), never lost;
- removed on one side, changed on the other: the change wins (the memory is written back, or restored);
- no base yet (a first sync, or a state written for another store): nothing is deleted; a memory on one side only
  is copied, a difference is a conflict, and a memory the store forgot leaves the folder (its copy is kept in
  conflicts/ when it differs from the forgotten version).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from pathlib import PurePosixPath

STATE_FORMAT = "ormah-sync"
STATE_VERSION = 1


class SyncStep(StrEnum):
    """What the sync does for one memory."""

    IN_STEP = "in_step"      # both sides hold the same bytes
    TO_FOLDER = "to_folder"  # new or changed in the store: its bytes go to the folder
    TO_STORE = "to_store"    # new or changed in the folder: its bytes go into the store (as a hand edit would)
    FORGET = "forget"        # removed from the folder: forgotten in the store (restorable)
    REMOVE = "remove"        # forgotten or deleted in the store: its file leaves the folder
    CONFLICT = "conflict"    # changed on both sides: the store's version stays, the folder's goes to conflicts/
    KEEP = "keep"            # removed from the folder, changed in the store (or the self node): written back
    RESTORE = "restore"      # forgotten in the store, changed in the folder: restored with the folder's version
    DROP = "drop"            # no base, forgotten in the store: leaves the folder (kept in conflicts/ if it differs)
    HELD = "held"            # a file that does not parse may be this memory: nothing is done this time
    GONE = "gone"            # on neither side any more: the state forgets it


CONFLICTS = frozenset({SyncStep.CONFLICT, SyncStep.KEEP, SyncStep.RESTORE})


@dataclass(frozen=True)
class SyncFile:
    """One side's copy of a memory: its path (`nodes/<name>.md`) and the sha256 of its bytes."""

    path: str
    sha256: str


@dataclass(frozen=True)
class SyncItem:
    """The plan for one memory. `folder`/`store`: each side's copy before the sync (None: none there)."""

    node_id: str
    step: SyncStep
    folder: SyncFile | None
    store: SyncFile | None
    reason: str = ""

    @property
    def conflict(self) -> bool:
        return self.step in CONFLICTS


@dataclass(frozen=True)
class SyncState:
    """The sync state file: which store it was written for, and the base of each memory (folder path + sha256)."""

    store_key: str
    base: Mapping[str, SyncFile]


def sync_plan(*, folder: Mapping[str, SyncFile], store: Mapping[str, SyncFile], base: Mapping[str, SyncFile],
              forgotten: Mapping[str, str], held: Mapping[str, str], protected: Iterable[str] = ()) -> list[SyncItem]:
    """One item per memory on either side or in the base, sorted by id.

    `forgotten`: id -> sha256 of the forgotten version as a live file, for memories the store holds only as a
    tombstone. `held`: id -> why a malformed file may be that memory (it is left alone). `protected`: ids the store
    never forgets (the self node).
    """
    keep = set(protected)
    items = []
    for node_id in sorted(set(folder) | set(store) | set(base)):
        f, s, b = folder.get(node_id), store.get(node_id), base.get(node_id)
        if node_id in held:
            items.append(SyncItem(node_id, SyncStep.HELD, f, s, held[node_id]))
            continue
        items.append(_decide(node_id, f, s, b, forgotten, keep))
    return items


def _decide(node_id: str, f: SyncFile | None, s: SyncFile | None, b: SyncFile | None,
            forgotten: Mapping[str, str], protected: set[str]) -> SyncItem:
    fh, sh, bh = _sha(f), _sha(s), _sha(b)
    if fh == sh:
        return SyncItem(node_id, SyncStep.GONE if fh is None else SyncStep.IN_STEP, f, s)
    if bh is None:
        if fh is None:
            return SyncItem(node_id, SyncStep.TO_FOLDER, f, s, "new in the store")
        if sh is None:
            if node_id in forgotten:
                return SyncItem(node_id, SyncStep.DROP, f, s, "forgotten in the store")
            return SyncItem(node_id, SyncStep.TO_STORE, f, s, "new in the folder")
        return SyncItem(node_id, SyncStep.CONFLICT, f, s, "differs on both sides and was never synced")
    if fh == bh:
        if sh is None:
            return SyncItem(node_id, SyncStep.REMOVE, f, s, "forgotten in the store")
        return SyncItem(node_id, SyncStep.TO_FOLDER, f, s, "changed in the store")
    if sh == bh:
        if fh is None:
            if node_id in protected:
                return SyncItem(node_id, SyncStep.KEEP, f, s, "the self node cannot be forgotten")
            return SyncItem(node_id, SyncStep.FORGET, f, s, "removed from the folder")
        return SyncItem(node_id, SyncStep.TO_STORE, f, s, "changed in the folder")
    if fh is None:
        return SyncItem(node_id, SyncStep.KEEP, f, s, "removed from the folder but changed in the store")
    if sh is None:
        return SyncItem(node_id, SyncStep.RESTORE, f, s, "forgotten in the store but changed in the folder")
    return SyncItem(node_id, SyncStep.CONFLICT, f, s, "changed on both sides")


def _sha(f: SyncFile | None) -> str | None:
    return None if f is None else f.sha256


def held_by(*, malformed: Iterable[str], ids: Iterable[str], base: Mapping[str, SyncFile]) -> dict[str, str]:
    """The memories a malformed file may be (id -> the file): the base names its path, or its name ends in the
    memory's `_<first 8 of the id>.md`. Syncing them could forget a memory whose file someone is halfway editing."""
    held: dict[str, str] = {}
    by_path = {b.path: node_id for node_id, b in base.items()}
    ids = set(ids) | set(base)
    for path in malformed:
        if path in by_path:
            held.setdefault(by_path[path], path)
        name = PurePosixPath(path).name
        for node_id in ids:
            if name.endswith(f"_{node_id[:8]}.md"):
                held.setdefault(node_id, path)
    return held


# ---------------------------------------------------------------------------
# The state file
# ---------------------------------------------------------------------------

def state_render(state: SyncState) -> str:
    """The state file's text: JSON, one memory per line (sorted, so a diff shows what moved)."""
    lines = [json.dumps({"format": STATE_FORMAT, "version": STATE_VERSION, "store": state.store_key})]
    lines += [json.dumps({"id": node_id, "path": f.path, "sha256": f.sha256})
              for node_id, f in sorted(state.base.items())]
    return "\n".join(lines) + "\n"


def state_parse(text: str) -> SyncState:
    """The state a state file holds; raises ValueError naming the first problem."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("it is empty")
    head = _json_line(lines[0], 1)
    if head.get("format") != STATE_FORMAT or not isinstance(head.get("store"), str):
        raise ValueError("its first line is not an Ormah sync header")
    if not isinstance(head.get("version"), int) or head["version"] > STATE_VERSION:
        raise ValueError(f"it is format version {head.get('version')}; this Ormah reads up to {STATE_VERSION}")
    base = {}
    for number, line in enumerate(lines[1:], start=2):
        entry = _json_line(line, number)
        if not all(isinstance(entry.get(k), str) and entry[k] for k in ("id", "path", "sha256")):
            raise ValueError(f"line {number} lacks an id, a path or a sha256")
        base[entry["id"]] = SyncFile(path=entry["path"], sha256=entry["sha256"])
    return SyncState(store_key=head["store"], base=base)


def _json_line(line: str, number: int) -> dict:
    try:
        data = json.loads(line)
    except json.JSONDecodeError:
        raise ValueError(f"line {number} is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f"line {number} is not a JSON object")
    return data
