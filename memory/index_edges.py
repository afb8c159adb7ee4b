"""The index's edges: EdgeRows derived from the rows' `connections_json` (the source node files' connections).

A connection whose target has no row yet is dangling: it gets its edge when that node is indexed
(`resolve_dangling`). Used by memory.index and the full rebuild (memory.rebuild, through memory.index).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Sequence
from datetime import datetime

from django.db import connection

from memory.index_insert import insert_rows
from memory.index_rows import CHUNK
from memory.models import EdgeRow, NodeRow


def rebuild_edges(sources: Iterable[NodeRow], fresh: Collection[int] = ()) -> None:
    """The outgoing edges of `sources` again from their connections (connections to nodes without a row skipped);
    `fresh`: ids of rows just inserted, which have no edges to delete."""
    sources = list(sources)
    held = [r.id for r in sources if r.id not in fresh]
    if held:
        EdgeRow.objects.filter(source__in=held).delete()
    wanted = {(c["target"]) for r in sources for c in json.loads(r.connections_json)}
    if not wanted:  # no connections: nothing to read or insert
        return
    targets = _row_ids(sorted(wanted))
    edges: dict[tuple[int, int, str], EdgeRow] = {}
    for row in sources:
        for c in json.loads(row.connections_json):
            target_id = targets.get(c["target"])
            if target_id is None or target_id == row.id:
                continue
            edges[(row.id, target_id, c["edge"])] = EdgeRow(
                source_id=row.id, target_id=target_id, edge_type=c["edge"], weight=c["weight"], reason=c["reason"],
                valid_from=_instant(c.get("valid_from")), valid_until=_instant(c.get("valid_until")),
            )
    insert_rows(EdgeRow, list(edges.values()))


def _row_ids(uids: Sequence[str]) -> dict[str, int]:
    """{uid: row id} of the uids that have a row: plain statements of CHUNK uids (the ORM's values_list built the
    query for ~0.2 ms of every remember that links)."""
    out: dict[str, int] = {}
    with connection.cursor() as cur:
        for i in range(0, len(uids), CHUNK):
            chunk = uids[i:i + CHUNK]
            cur.execute(f"SELECT uid, id FROM {NodeRow._meta.db_table} WHERE uid IN ({', '.join(['%s'] * len(chunk))})",
                        chunk)
            out.update(cur.fetchall())
    return out


def rebuild_all_edges() -> None:
    """Every edge again from the rows' connections."""
    EdgeRow.objects.all().delete()
    ids = list(NodeRow.objects.exclude(connections_json="[]").values_list("id", flat=True))
    for i in range(0, len(ids), CHUNK):
        rebuild_edges(NodeRow.objects.filter(id__in=ids[i:i + CHUNK]).only("id", "connections_json"))


def _instant(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def resolve_dangling(new_uids: Sequence[str]) -> None:
    """Rows whose connections name a node that just appeared get their edges rebuilt."""
    if len(new_uids) > 50:
        # One pass over the rows that have connections, instead of one LIKE scan per new node; only the rows
        # that name a new node are rebuilt (rebuilding every row per chunk made a rebuild quadratic).
        new = set(new_uids)
        hits = [
            row_id for row_id, uid, conns in
            NodeRow.objects.exclude(connections_json="[]").values_list("id", "uid", "connections_json")
            if uid not in new and any(c["target"] in new for c in json.loads(conns))
        ]
        for i in range(0, len(hits), CHUNK):
            rebuild_edges(NodeRow.objects.filter(id__in=hits[i:i + CHUNK]).only("id", "connections_json"))
        return
    for uid in new_uids:
        rebuild_edges(
            NodeRow.objects.filter(connections_json__contains=uid).exclude(uid=uid).only("id", "connections_json"),
        )
