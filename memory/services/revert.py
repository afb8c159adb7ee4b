"""Undo of a person's change: a memory's file goes back to the bytes it had, unless it changed again since.

The UI takes a snapshot (memory.selectors.node_snapshot) before an action and keeps the file's hash after it;
`node_revert` then restores the snapshot only while the file still has that hash, so a later edit (by hand, by
the agent or by a job) is never overwritten by an undo. The write goes through the write door.
"""

from __future__ import annotations

from datetime import datetime

from memory.domain.node import Node, utcnow
from memory.errors import Conflict
from memory.store import content_hash
from memory.writes import write_unit


def node_revert(*, node_id: str, text: str, expected_hash: str, now: datetime | None = None) -> Node:
    """Write `text` back as the memory's file if the file still hashes to `expected_hash`; re-index it.

    Raises Conflict when the memory is gone or its file changed since `expected_hash` was taken.
    """
    now = now or utcnow()
    with write_unit() as unit:
        path = unit.store.path_for(node_id)
        if path is None:
            raise Conflict(f"Memory {node_id[:8]} no longer exists; restore it first")
        current, stored = unit.store.read(path)
        if stored.hash != expected_hash:
            raise Conflict(f"Memory {current.title or node_id[:8]} changed again since; the undo would lose that "
                           "change, so nothing was undone")
        if content_hash(text.encode("utf-8")) == stored.hash:
            return current
        unit.audit(operation="revert", node=current, now=now)
        unit.put_bytes(path, text, node_id, expected=stored)  # byte-exact, as merge_undo restores
    return unit.store.read(path)[0]
