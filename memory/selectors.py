"""Reads: resolve references, load nodes from their files, neighbours, counts and drift."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from django.db.models import Count, Q

from memory.domain.node import Node
from memory.errors import AmbiguousNodeRef, NodeNotFound, ValidationFailed
from memory.models import EdgeRow, NodeRow
from memory.store import MarkdownStore, StoredFile

MIN_PREFIX = 4


def node_row_get(*, ref: str) -> NodeRow:
    """The index row for a full id or a unique id prefix (at least 4 characters).

    Raises NodeNotFound, or AmbiguousNodeRef listing the candidates.
    """
    ref = (ref or "").strip().lower()
    if len(ref) < MIN_PREFIX or not all(c in "0123456789abcdef-" for c in ref):
        raise ValidationFailed(f"'{ref}' is not a node id or an id prefix of at least {MIN_PREFIX} hex characters")
    row = NodeRow.objects.filter(uid=ref).first()
    if row is not None:
        return row
    matches = list(NodeRow.objects.filter(uid__startswith=ref).order_by("uid")[:11])
    if not matches:
        raise NodeNotFound(f"No memory with id {ref}")
    if len(matches) > 1:
        ids = [m.uid for m in matches[:10]]
        raise AmbiguousNodeRef(f"Id prefix {ref} matches {len(matches)}+ memories; use more characters",
                               details={"candidates": ids})
    return matches[0]


def node_read(*, store: MarkdownStore, row: NodeRow) -> tuple[Node, StoredFile]:
    """The node as its file says now (the truth), with the file's hash."""
    path = store.root / row.file_path
    try:
        return store.read(path)
    except FileNotFoundError:
        raise NodeNotFound(f"The file of memory {row.uid} is gone: {path}") from None


def node_get(*, store: MarkdownStore, ref: str) -> Node:
    """The node for an id or unique prefix, read from its markdown file."""
    return node_read(store=store, row=node_row_get(ref=ref))[0]


def self_row() -> NodeRow | None:
    """The self node's row (the oldest, should there be several)."""
    return NodeRow.objects.filter(is_self=True).order_by("created", "uid").first()


def self_defined_rows(*, limit: int = 100) -> list[NodeRow]:
    """Memories the self node defines (identity), most important first."""
    me = self_row()
    if me is None:
        return []
    ids = EdgeRow.objects.filter(source=me, edge_type="defines").values_list("target_id", flat=True)
    return list(NodeRow.objects.filter(id__in=ids).order_by("-importance", "-updated")[:limit])


@dataclass(frozen=True)
class Neighbour:
    row: NodeRow
    edge_type: str
    weight: float
    reason: str | None
    direction: str  # "out" | "in"


def node_neighbours(*, row: NodeRow) -> list[Neighbour]:
    """Edges in and out of a node with the rows at their other ends."""
    out = [Neighbour(e.target, e.edge_type, e.weight, e.reason, "out")
           for e in EdgeRow.objects.filter(source=row).select_related("target")]
    inn = [Neighbour(e.source, e.edge_type, e.weight, e.reason, "in")
           for e in EdgeRow.objects.filter(target=row).select_related("source")]
    return out + inn


def index_counts() -> dict:
    """Counts of nodes by tier and type, and of edges."""
    by_tier = dict(NodeRow.objects.values_list("tier").annotate(n=Count("id")))
    by_type = dict(NodeRow.objects.values_list("type").annotate(n=Count("id")))
    return {"nodes": sum(by_tier.values()), "by_tier": by_tier, "by_type": by_type,
            "edges": EdgeRow.objects.count()}


@dataclass
class Drift:
    not_indexed: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.not_indexed or self.missing_files or self.changed)

    def as_dict(self) -> dict:
        return {"clean": self.clean, "not_indexed": self.not_indexed, "missing_files": self.missing_files,
                "changed": self.changed}


def index_drift(*, store: MarkdownStore) -> Drift:
    """Differences between the node files and the index, judged by path, size and mtime."""
    drift = Drift()
    rows = {r[0]: (r[1], r[2]) for r in NodeRow.objects.values_list("file_path", "file_mtime_ns", "file_size")}
    on_disk = set()
    for path in store.iter_paths():
        rel = os.path.relpath(path, store.root)
        on_disk.add(rel)
        known = rows.get(rel)
        if known is None:
            drift.not_indexed.append(rel)
            continue
        st = path.stat()
        if (st.st_mtime_ns, st.st_size) != known:
            drift.changed.append(rel)
    drift.missing_files = sorted(set(rows) - on_disk)
    return drift


def rows_search_by_title(*, text: str, limit: int = 20) -> list[NodeRow]:
    """Plain substring lookup over titles and content (admin and CLI convenience, not recall)."""
    return list(NodeRow.objects.filter(Q(title__icontains=text) | Q(content__icontains=text))[:limit])
