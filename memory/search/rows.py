"""What recall reads of index rows: the scorer's features for every candidate, the hit's fields for the few returned.

One plain query per set of rows. Through the ORM, the ~180 candidates of a query cost more in building the IN list
and parsing datetimes than the query itself; here the datetimes SQLite stores as UTC text are read with
`datetime.fromisoformat` (PostgreSQL hands back aware datetimes, which pass through), giving the same values Django's
converters give.
"""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Iterable
from datetime import UTC, datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from memory.search.filters import NODE_TABLE

CHUNK = 500  # ids per query (far below any backend's parameter limit)
DATETIME_FIELDS = frozenset({"created", "updated", "valid_until", "last_accessed"})

FeatureRow = namedtuple("FeatureRow", "id content title created space confidence tier access_count last_accessed")
HitRow = namedtuple("HitRow", "id uid short_id title content type tier space tags_text created updated valid_until "
                              "confidence")


def as_datetime(value) -> datetime | None:
    """A stored timestamp as an aware datetime (naive ones are UTC, as Django stores them with USE_TZ)."""
    if value is None:
        return None
    if not isinstance(value, datetime):
        try:
            value = datetime.fromisoformat(value)
        except ValueError:
            value = parse_datetime(value)
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _load(row_ids: Iterable[int], kind: type) -> dict[int, tuple]:
    ids = [int(r) for r in dict.fromkeys(row_ids)]
    if not ids:
        return {}
    fields = kind._fields
    dates = [i for i, name in enumerate(fields) if name in DATETIME_FIELDS]
    columns = ", ".join(f"n.{name}" for name in fields)
    out: dict[int, tuple] = {}
    with connection.cursor() as cur:
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            cur.execute(f"SELECT {columns} FROM {NODE_TABLE} n WHERE n.id IN ({', '.join(['%s'] * len(chunk))})",
                        chunk)
            for values in cur.fetchall():
                values = list(values)
                for i in dates:
                    values[i] = as_datetime(values[i])
                out[values[0]] = kind._make(values)
    return out


def feature_rows(row_ids: Iterable[int]) -> dict[int, FeatureRow]:
    """The scorer's fields of the given rows, by row id (missing ids are simply absent)."""
    return _load(row_ids, FeatureRow)


def hit_rows(row_ids: Iterable[int]) -> dict[int, HitRow]:
    """The fields a SearchHit shows of the given rows, by row id (missing ids are simply absent)."""
    return _load(row_ids, HitRow)
