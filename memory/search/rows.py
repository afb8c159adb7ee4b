"""What recall reads of index rows: the scorer's features for every candidate, the hit's fields for the few returned,
and what their warnings depend on (`trust_rows`, read for every hit list recall returns).

One plain query per set of rows. Through the ORM, the ~180 candidates of a query cost more in building the IN list
and parsing datetimes than the query itself; here the datetimes SQLite stores as UTC text are read as that text
(not through sqlite3's per-value converter) and parsed with `datetime.fromisoformat` once per distinct text and
process (PostgreSQL hands back aware datetimes, which pass through), giving the same values Django's converters give.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from memory.backends import backend
from memory.search.filters import NODE_TABLE

CHUNK = 500  # ids per query (far below any backend's parameter limit)
DATETIME_FIELDS = frozenset({"created", "updated", "valid_until", "last_accessed"})

HitRow = namedtuple("HitRow", "id uid short_id title content type tier space tags_text created updated valid_until "
                              "confidence")
# The scorer's fields and a hit's in one read: recall builds its hits from the candidates' rows instead of reading
# the returned ones again (the few hits not among the candidates, activation's, are read by `hit_rows`).
FeatureRow = namedtuple("FeatureRow", (*HitRow._fields, "access_count", "last_accessed"))


_PARSED: dict[str, datetime] = {}  # stored text -> its datetime: candidates recur across queries (~2 per row)
PARSED_MAX = 16_384  # ~150 bytes an entry: at most ~2.5 MB per process (the serve tree's memory has a target)


def _parse(text: str) -> datetime:
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        value = parse_datetime(text)
    value = value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    if len(_PARSED) >= PARSED_MAX:
        _PARSED.clear()
    _PARSED[text] = value
    return value


def as_datetime(value) -> datetime | None:
    """A stored timestamp as an aware datetime (naive ones are UTC, as Django stores them with USE_TZ)."""
    if value is None:
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    return _PARSED.get(value) or _parse(value)


def _load(row_ids: Iterable[int], kind: type) -> dict[int, tuple]:
    ids = [int(r) for r in dict.fromkeys(row_ids)]
    if not ids:
        return {}
    fields = kind._fields
    dates = [i for i, name in enumerate(fields) if name in DATETIME_FIELDS]
    stamp = backend().timestamp_column
    columns = ", ".join(stamp(f"n.{name}") if name in DATETIME_FIELDS else f"n.{name}" for name in fields)
    out: dict[int, tuple] = {}
    with connection.cursor() as cur:
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            cur.execute(f"SELECT {columns} FROM {NODE_TABLE} n WHERE n.id IN ({', '.join(['%s'] * len(chunk))})",
                        chunk)
            parsed = _PARSED.get
            for values in cur.fetchall():
                values = list(values)
                for i in dates:
                    value = values[i]
                    if value is not None:
                        values[i] = parsed(value) or as_datetime(value)
                out[values[0]] = kind._make(values)
    return out


def feature_rows(row_ids: Iterable[int]) -> dict[int, FeatureRow]:
    """The scorer's fields (and a hit's) of the given rows, by row id (missing ids are simply absent)."""
    return _load(row_ids, FeatureRow)


def hit_rows(row_ids: Iterable[int], known: Mapping[int, HitRow | FeatureRow] | None = None
             ) -> dict[int, HitRow | FeatureRow]:
    """The fields a SearchHit shows of the given rows, by row id (missing ids are simply absent): taken from `known`
    (rows this call already read, the candidates' `feature_rows`) where it has them, the rest read."""
    known = known or {}
    ids = list(dict.fromkeys(int(r) for r in row_ids))
    out = {i: known[i] for i in ids if i in known}
    out.update(_load([i for i in ids if i not in out], HitRow))
    return out


RelationEdge = namedtuple("RelationEdge", "source_uid target_uid edge_type valid_from valid_until")


@dataclass(frozen=True, slots=True)
class TrustRows:
    """The index rows a list of memories' warnings are built from (memory.context.selectors.trust_facts)."""

    nodes: list[tuple[int, str, str]]  # (row id, uid, trust_json) of the memories that exist, in the index's order
    citations: list[tuple[int, str]]  # (row id, event id), in the order they were indexed
    edges: list[RelationEdge]  # edges of `edge_types` touching any of the memories, in the order they were indexed


def _in(values: Sequence) -> str:
    return ", ".join(["%s"] * len(values))


def trust_rows(uids: Sequence[str], edge_types: Sequence[str]) -> TrustRows:
    """The trust_json, citations and typed edges of the memories with these ids: three plain queries, where the ORM
    spent several times each query's own cost building it (recall asks this for every hit list)."""
    uids = list(dict.fromkeys(uids))
    nodes: list[tuple[int, str, str]] = []
    citations: list[tuple[int, int, str]] = []
    edges: dict[int, tuple] = {}
    types = list(edge_types)
    with connection.cursor() as cur:
        for start in range(0, len(uids), CHUNK):
            chunk = uids[start:start + CHUNK]
            cur.execute(f"SELECT id, uid, trust_json FROM {NODE_TABLE} WHERE uid IN ({_in(chunk)})", chunk)
            nodes.extend(cur.fetchall())
        ids = [row[0] for row in nodes]
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            cur.execute(f"SELECT id, node_id, event_id FROM memory_nodecitationrow WHERE node_id IN ({_in(chunk)})",
                        chunk)
            citations.extend(cur.fetchall())
            if not types:
                continue
            cur.execute(
                f"SELECT e.id, s.uid, t.uid, e.edge_type, e.valid_from, e.valid_until FROM memory_edgerow e "
                f"JOIN {NODE_TABLE} s ON s.id = e.source_id JOIN {NODE_TABLE} t ON t.id = e.target_id "
                f"WHERE (e.source_id IN ({_in(chunk)}) OR e.target_id IN ({_in(chunk)})) "
                f"AND e.edge_type IN ({_in(types)})", [*chunk, *chunk, *types])
            for edge_id, *values in cur.fetchall():
                edges[edge_id] = values
    return TrustRows(
        nodes=nodes,
        citations=[(node_id, event_id) for _, node_id, event_id in sorted(citations)],
        edges=[RelationEdge(src, dst, kind, as_datetime(start), as_datetime(end))
               for _, (src, dst, kind, start, end) in sorted(edges.items())],
    )
