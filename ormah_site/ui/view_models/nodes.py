"""The node panel's view-model: the memory as its file says, its edges both ways, identity and audit history.

Built from memory's selectors only; everything is evaluated, so the template never queries while rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory import runtime
from memory.cards import AuditEntry, NodeOption, node_audit, node_label, node_suggest, nodes_titled
from memory.domain.enums import EdgeType
from memory.domain.node import Node, utcnow
from memory.errors import MalformedNodeFile, NodeNotFound, OrmahError
from memory.malformed import node_read_error
from memory.selectors import Neighbour, node_neighbours, node_read, node_row_get


@dataclass(frozen=True)
class EdgeView:
    uid: str
    short_id: str
    label: str
    edge_type: str
    weight: float
    reason: str | None
    direction: str  # "out" | "in"


@dataclass(frozen=True)
class NodeDetail:
    """Everything the node panel shows: the node as its file says, edges, identity and audit history."""

    node: Node
    file_path: str
    file_hash: str
    label: str
    outdated: bool
    is_self: bool
    defined_by_self: bool
    defines_count: int
    edges_out: list[EdgeView]
    edges_in: list[EdgeView]
    audit: list[AuditEntry]


def _edge_view(n: Neighbour) -> EdgeView:
    return EdgeView(uid=n.row.uid, short_id=n.row.short_id, label=node_label(n.row.title, n.row.content),
                    edge_type=n.edge_type, weight=n.weight, reason=n.reason, direction=n.direction)


def node_detail(*, ref: str, now: datetime | None = None) -> NodeDetail:
    """The node panel's data for an id or unique prefix; the node itself is read from its markdown file.

    Raises NodeNotFound, AmbiguousNodeRef, or MalformedNodeFile naming the file (relative to the home) when the
    memory's file is malformed, before or after a sync dropped its row (memory.malformed.node_read_error).
    """
    now = now or utcnow()
    store = runtime.store()
    try:
        row = node_row_get(ref=ref)
        node, stored = node_read(store=store, row=row)
    except (NodeNotFound, MalformedNodeFile) as exc:
        raise node_read_error(store=store, ref=ref, error=exc) from None
    neighbours = sorted(node_neighbours(row=row), key=lambda n: (n.edge_type, -n.weight, n.row.uid))
    return NodeDetail(
        node=node, file_path=row.file_path, file_hash=stored.hash, label=node_label(node.title or "", node.content),
        outdated=node.is_outdated(now), is_self=row.is_self,
        defined_by_self=any(n.direction == "in" and n.edge_type == EdgeType.DEFINES and n.row.is_self
                            for n in neighbours),
        defines_count=sum(1 for n in neighbours if n.direction == "out" and n.edge_type == EdgeType.DEFINES),
        edges_out=[_edge_view(n) for n in neighbours if n.direction == "out"],
        edges_in=[_edge_view(n) for n in neighbours if n.direction == "in"],
        audit=node_audit(node_uid=row.uid),
    )


def node_on_disk(*, ref: str) -> tuple[Node, str]:
    """A memory as its file is on disk now, and the file's hash (to detect edits made while a form was open)."""
    store = runtime.store()
    try:
        node, stored = node_read(store=store, row=node_row_get(ref=ref))
    except (NodeNotFound, MalformedNodeFile) as exc:  # as a read by id answers: the malformed file named (422)
        raise node_read_error(store=store, ref=ref, error=exc) from None
    return node, stored.hash


@dataclass(frozen=True)
class TargetMatch:
    """What the connect box's text resolves to: one memory, or why not (with the candidates to pick from)."""

    uid: str | None
    message: str = ""
    options: tuple[NodeOption, ...] = ()


def connect_target(*, text: str, source_uid: str) -> TargetMatch:
    """Resolve the connect box: an id or id prefix, else an exact title, else the only memory whose title or
    content contains the text. Several matches come back as options to pick from."""
    text = text.strip()
    if not text:
        return TargetMatch(uid=None, message="Type part of a title.")
    try:
        row = node_row_get(ref=text)
        if row.uid != source_uid:
            return TargetMatch(uid=row.uid)
    except OrmahError:
        pass
    titled = nodes_titled(title=text, exclude=source_uid)
    if len(titled) == 1:
        return TargetMatch(uid=titled[0].uid)
    found = titled or node_suggest(text=text, exclude=source_uid, limit=8)
    if len(found) == 1:
        return TargetMatch(uid=found[0].uid)
    if not found:
        return TargetMatch(uid=None, message=f"No memory matches “{text}”.")
    return TargetMatch(uid=None, message=f"{len(found)} memories match “{text}”; pick one.", options=tuple(found))
