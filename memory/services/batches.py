"""Many small writes of one kind (the maintenance jobs' edges, tiers and spaces), a few per hold of the write lock.

Each item is exactly the write its single service makes (`edge_create`, `node_update`), but `PER_HOLD` of them share
one unit of work: one lock hold, one folder fsync and one index transaction instead of one each. An agent's write
waits for at most one such short batch, as with `nodes_importance_set` (docs/benchmarks.md, "Sleep cycle").
An item that fails with an OrmahError (NodeNotFound, WriteConflict, ProtectedNode, ValidationFailed,
PayloadTooLarge, StorageError: each raised before its file is replaced, and before its audit row is queued) is
returned as its error, leaves nothing, and the others are written; anything else rolls back the batch and is raised.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from memory.domain.enums import EdgeType
from memory.domain.node import Connection, Node, utcnow
from memory.domain.requests import NodePatch
from memory.errors import OrmahError
from memory.services.nodes import connect_in, update_in
from memory.writes import WriteUnit, write_unit

PER_HOLD = 5  # writes per write-lock hold: each an fsynced file that an agent's remember may wait for
T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """One edge to write: source -> target, as `edge_create` takes it."""

    source_ref: str
    target_ref: str
    edge: EdgeType = EdgeType.RELATED_TO
    weight: float = 0.5
    reason: str | None = None


def _in_holds(items: Sequence[T], write: Callable[[WriteUnit, T], R], per_hold: int) -> list[R | OrmahError]:
    out: list[R | OrmahError] = []
    per_hold = max(1, per_hold)
    for start in range(0, len(items), per_hold):
        with write_unit() as unit:
            for item in items[start:start + per_hold]:
                try:
                    out.append(write(unit, item))
                except OrmahError as exc:
                    out.append(exc)
    return out


def edges_create(*, edges: Sequence[EdgeSpec], per_hold: int = PER_HOLD) -> list[Connection | OrmahError]:
    """`edge_create` for each edge, `per_hold` per unit; the connection written, or the error, per edge in order."""
    return _in_holds(edges, lambda unit, e: connect_in(unit, source_ref=e.source_ref, target_ref=e.target_ref,
                                                       edge=e.edge, weight=e.weight, reason=e.reason), per_hold)


def nodes_update(*, patches: Sequence[tuple[str, NodePatch]], now: datetime | None = None,
                 per_hold: int = PER_HOLD) -> list[Node | OrmahError]:
    """`node_update` for each (ref, patch), `per_hold` per unit; the node as written, or the error, per item."""
    now = now or utcnow()
    return _in_holds(patches, lambda unit, p: update_in(unit, ref=p[0], patch=p[1], now=now), per_hold)
