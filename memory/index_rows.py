"""What a node's index row holds: every NodeRow column derived from the node and its file (no queries), and
CHUNK, the rows per query of every index module (memory.index, index_edges, index_vectors, rebuild).

memory.index writes these rows; a change here changes how rows are derived, so it bumps
memory.index.INDEX_FORMAT.
"""

from __future__ import annotations

import json

from memory.domain.identity import is_self_node
from memory.domain.node import PROVENANCE_KEYS, Node
from memory.models import NodeRow
from memory.store import StoredFile

CHUNK = 500  # rows per query or bulk batch (far below any backend's parameter limit)
SUPERSEDED_BY_KEY = "superseded_by"  # written by nodes_consolidate into the sources' files
# Columns nothing else is derived from: no FTS entry (title, content, tags_text), vector, edge (connections_json),
# nor the row's identity (uid, file_path); tier and space besides, which only the vec0 metadata repeats (the index
# sets it for such a row) and the vector log follows by its trigger. A write that changes only these, from the
# file its row was indexed from, updates only them.
ROW_ONLY_COLUMNS = frozenset({
    "space_locked", "source", "confidence", "importance", "access_count", "stability", "updated", "last_accessed",
    "last_review", "is_self", "file_hash", "file_mtime_ns", "file_size", "indexed_seq", "pinned", "authority",
    "read_only", "trust_json", "tier", "space",
})
# The node fields anything beyond the row's ROW_ONLY_COLUMNS is derived from (FTS, tags, citations, edges,
# vectors, passages, the vec0 metadata's type and the vector log).
_DERIVED_FIELDS = ("id", "title", "content", "tags", "connections", "source_event_ids", "type", "created",
                   "valid_until")
_COLUMNS = tuple(f.attname for f in NodeRow._meta.concrete_fields if f.attname != "id")


def row_only_change(before: Node, after: Node) -> bool:
    """True when `after` differs from `before` only in what their index row alone holds (importance, access, trust
    facts, tier, space): nothing the FTS entry, tags, citations, edges, vectors or passages are derived from."""
    return all(getattr(before, name) == getattr(after, name) for name in _DERIVED_FIELDS)


def row_values(row: NodeRow) -> dict[str, object]:
    """Every column of a row but its primary key, by attribute name (to find the columns a write changes)."""
    return {name: getattr(row, name) for name in _COLUMNS}


def fill_row(row: NodeRow, node: Node, stored: StoredFile, rel: str, seq: int) -> NodeRow:
    """Set every column of `row` from `node`, its file (`stored`, at `rel` under the root) and the write's `seq`."""
    row.uid, row.short_id = node.id, node.short_id
    row.type, row.tier, row.space, row.space_locked = str(node.type), str(node.tier), node.space, node.space_locked
    row.title, row.content, row.tags_text = node.title or "", node.content, " ".join(node.tags)
    row.source, row.connections_json = node.source, _connections_json(node)
    row.confidence, row.importance, row.access_count = node.confidence, node.importance, node.access_count
    row.stability, row.created, row.updated = node.stability, node.created, node.updated
    row.last_accessed, row.last_review, row.valid_until = node.last_accessed, node.last_review, node.valid_until
    row.is_self = is_self_node(node)
    row.file_path, row.file_hash = rel, stored.hash
    row.file_mtime_ns, row.file_size, row.indexed_seq = stored.mtime_ns, stored.size, seq
    row.pinned, row.authority, row.read_only = node.pinned, node.authority, node.read_only
    row.trust_json = _trust_json(node)
    return row


def _connection_dict(conn) -> dict:
    data = {"target": conn.target, "edge": str(conn.edge), "weight": conn.weight, "reason": conn.reason}
    if conn.valid_from is not None:
        data["valid_from"] = conn.valid_from.isoformat()
    if conn.valid_until is not None:
        data["valid_until"] = conn.valid_until.isoformat()
    if conn.source_event_ids:
        data["source_event_ids"] = list(conn.source_event_ids)
    return data


def _connections_json(node: Node) -> str:
    return json.dumps([_connection_dict(c) for c in node.connections], sort_keys=True)


def _trust_json(node: Node) -> str:
    """The trust facts recall needs per hit: workspace provenance and the `superseded_by` key consolidation writes."""
    data = {k: getattr(node.provenance, k) for k in PROVENANCE_KEYS if getattr(node.provenance, k) is not None}
    superseded_by = node.extra.get(SUPERSEDED_BY_KEY)
    if isinstance(superseded_by, str) and superseded_by:
        data[SUPERSEDED_BY_KEY] = superseded_by
    return json.dumps(data, sort_keys=True)
