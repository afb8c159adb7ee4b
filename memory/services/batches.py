"""Many small writes of one kind (the maintenance jobs' edges, tiers and spaces), a few per hold of the write lock.

Each item is exactly the write its single service makes (`edge_create`, `node_update`), but `PER_HOLD` of them share
one unit of work: one lock hold, one folder fsync and one index transaction instead of one each; the edges of one
source in a unit are added to its file in one read and one write (what writing them one by one leaves). An agent's
write waits for at most one such short batch, as with `nodes_importance_set` (docs/benchmarks.md, "Sleep cycle").
An item that fails with an OrmahError (NodeNotFound, WriteConflict, ProtectedNode, ValidationFailed,
PayloadTooLarge, StorageError: each raised before its file is replaced, and before its audit row is queued) is
returned as its error, leaves nothing, and the others are written; anything else rolls back the batch and is raised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

from memory.domain.enums import EdgeType
from memory.domain.node import Connection, Node, utcnow, with_connection
from memory.domain.requests import NodePatch
from memory.errors import OrmahError, ValidationFailed
from memory.models import NodeRow
from memory.selectors import node_row_get
from memory.services.guard import guard_write
from memory.services.nodes import update_in
from memory.writes import WriteUnit, write_unit

PER_HOLD = 5  # writes per write-lock hold: each an fsynced file that an agent's remember may wait for


@dataclass(frozen=True, slots=True)
class EdgeSpec:
    """One edge to write: source -> target, as `edge_create` takes it."""

    source_ref: str
    target_ref: str
    edge: EdgeType = EdgeType.RELATED_TO
    weight: float = 0.5
    reason: str | None = None


def edges_create(*, edges: Sequence[EdgeSpec], per_hold: int = PER_HOLD) -> list[Connection | OrmahError]:
    """`edge_create` for each edge, `per_hold` per unit; the connection written, or the error, per edge in order.

    The edges of one source in a unit are added to its file in one read and one write (`_connect_group`), in the
    order given: the file, its rows and edges are what `edge_create` one by one leaves, `updated` stamped once.
    """
    out: list[Connection | OrmahError] = []
    per_hold = max(1, per_hold)
    for start in range(0, len(edges), per_hold):
        hold = edges[start:start + per_hold]
        groups: dict[str, list[int]] = {}
        for i, spec in enumerate(hold):
            groups.setdefault(spec.source_ref, []).append(i)
        found: dict[int, Connection | OrmahError] = {}
        with write_unit() as unit:
            rows = _rows_by_uid([s.source_ref for s in hold] + [s.target_ref for s in hold])
            for members in groups.values():
                found.update(zip(members, _connect_group(unit, [hold[i] for i in members], rows)))
        out.extend(found[i] for i in range(len(hold)))
    return out


def _rows_by_uid(refs: Sequence[str]) -> dict[str, NodeRow]:
    """The rows of the refs that are whole ids, in one query (a hold's sources and targets)."""
    uids = {(ref or "").strip().lower() for ref in refs}
    return {row.uid: row for row in NodeRow.objects.filter(uid__in=uids)}


def _row(ref: str, rows: dict[str, NodeRow]) -> NodeRow:
    """node_row_get's row for `ref`, from `rows` when it is a whole id held there; raises as node_row_get."""
    row = rows.get((ref or "").strip().lower())
    return row if row is not None else node_row_get(ref=ref)


def _connect_group(unit: WriteUnit, specs: Sequence[EdgeSpec], rows: dict[str, NodeRow]
                   ) -> list[Connection | OrmahError]:
    """`connect_in` (memory.services.nodes) for edges of one source: its row looked up, its file read and saved
    once. Per edge, in order, the connection or the error that connect_in would have raised for it: a bad weight,
    the source or target not found, a self-loop, then (for the edges that change the file) the read, the guard or
    the save; a failed read, guard or save writes none of them. `rows`: rows already read in this unit, by uid."""
    out: list[Connection | OrmahError | None] = [None] * len(specs)
    try:
        source_row, missing = _row(specs[0].source_ref, rows), None
    except OrmahError as exc:
        source_row, missing = None, exc
    todo: list[tuple[int, Connection]] = []
    for i, spec in enumerate(specs):
        if not 0.0 <= spec.weight <= 1.0:
            out[i] = ValidationFailed("weight must be between 0 and 1")
        elif source_row is None:
            out[i] = missing
        else:
            try:
                target = _row(spec.target_ref, rows).uid
            except OrmahError as exc:
                out[i] = exc
                continue
            if target == source_row.uid:
                out[i] = ValidationFailed("A memory cannot connect to itself")
                continue
            todo.append((i, Connection(target=target, edge=EdgeType(spec.edge), weight=spec.weight,
                                       reason=spec.reason)))
    if not todo:
        return out
    changed: list[int] = []
    try:
        node, stored = unit.read_row(source_row)
        new = node
        for i, conn in todo:
            after = with_connection(new, conn)
            if after != new:
                changed.append(i)
            new, out[i] = after, conn
        if changed:
            guard_write(node)
            unit.save(replace(new, updated=utcnow()), expected=stored)
    except OrmahError as exc:
        for i in changed or [i for i, _ in todo]:
            out[i] = exc
    return out


def nodes_update(*, patches: Sequence[tuple[str, NodePatch]], now: datetime | None = None,
                 per_hold: int = PER_HOLD) -> list[Node | OrmahError]:
    """`node_update` for each (ref, patch), `per_hold` per unit; the node as written, or the error, per item."""
    now = now or utcnow()
    out: list[Node | OrmahError] = []
    per_hold = max(1, per_hold)
    for start in range(0, len(patches), per_hold):
        hold = patches[start:start + per_hold]
        with write_unit() as unit:
            rows = _rows_by_uid([ref for ref, _ in hold])  # one query for the hold, not one node_row_get each
            for ref, patch in hold:
                try:
                    out.append(update_in(unit, ref=ref, patch=patch, now=now, row=_row(ref, rows)))
                except OrmahError as exc:
                    out.append(exc)
    return out
