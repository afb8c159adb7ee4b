"""Recall filters as one value, and the SQL that applies them to memory_noderow rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import connection

NODE_TABLE = "memory_noderow"
TAG_TABLE = "memory_nodetagrow"


@dataclass(frozen=True, slots=True)
class Filters:
    """What a hit must satisfy. `active_at` set: memories whose valid_until <= active_at are excluded (outdated)."""

    types: tuple[str, ...] = ()
    tiers: tuple[str, ...] = ()
    spaces: tuple[str | None, ...] | None = None
    tags: tuple[str, ...] = ()
    created_after: datetime | None = None
    created_before: datetime | None = None
    active_at: datetime | None = None

    @property
    def empty(self) -> bool:
        """True when nothing is filtered at all."""
        return self == Filters()

    @property
    def needs_rows(self) -> bool:
        """True when a filter cannot run inside vec0 (tags or dates)."""
        return bool(self.tags) or self.created_after is not None or self.created_before is not None

    def with_window(self, after: datetime | None, before: datetime | None) -> Filters:
        """The same filters with a created-date window."""
        return Filters(self.types, self.tiers, self.spaces, self.tags, after, before, self.active_at)


def _placeholders(values: Sequence) -> str:
    return ", ".join(["%s"] * len(values))


def _dt(value: datetime) -> str:
    return connection.ops.adapt_datetimefield_value(value)


def where_sql(filters: Filters, alias: str = "n") -> tuple[str, list]:
    """A SQL condition over `alias` (a memory_noderow row) and its parameters; "1 = 1" when nothing filters."""
    parts: list[str] = []
    params: list = []
    if filters.types:
        parts.append(f"{alias}.type IN ({_placeholders(filters.types)})")
        params.extend(filters.types)
    if filters.tiers:
        parts.append(f"{alias}.tier IN ({_placeholders(filters.tiers)})")
        params.extend(filters.tiers)
    if filters.spaces is not None:
        named = [s for s in filters.spaces if s]
        alternatives = [f"{alias}.space IN ({_placeholders(named)})"] if named else []
        if any(not s for s in filters.spaces):
            alternatives.append(f"{alias}.space IS NULL")
        parts.append("(" + " OR ".join(alternatives or ["1 = 0"]) + ")")
        params.extend(named)
    if filters.tags:
        parts.append(f"{alias}.id IN (SELECT t.node_id FROM {TAG_TABLE} t "
                     f"WHERE t.tag IN ({_placeholders(filters.tags)}))")
        params.extend(filters.tags)
    if filters.created_after is not None:
        parts.append(f"{alias}.created >= %s")
        params.append(_dt(filters.created_after))
    if filters.created_before is not None:
        parts.append(f"{alias}.created < %s")
        params.append(_dt(filters.created_before))
    if filters.active_at is not None:
        parts.append(f"({alias}.valid_until IS NULL OR {alias}.valid_until > %s)")
        params.append(_dt(filters.active_at))
    return (" AND ".join(parts) or "1 = 1"), params


def matching_ids(filters: Filters, *, limit: int | None = None, row_ids: Sequence[int] | None = None,
                 skip_self: bool = False) -> list[int]:
    """Row ids passing the filters (optionally only among `row_ids`, without the self node), at most `limit`."""
    where, params = where_sql(filters)
    if skip_self:
        where += " AND n.is_self = %s"
        params.append(False)
    if row_ids is not None:
        if not row_ids:
            return []
        if filters.empty and limit is None and not skip_self:
            return list(row_ids)
        where += f" AND n.id IN ({_placeholders(row_ids)})"
        params.extend(int(r) for r in row_ids)
    sql = f"SELECT n.id FROM {NODE_TABLE} n WHERE {where}"
    if limit is not None:
        sql += " LIMIT %s"
        params.append(int(limit))
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return [r[0] for r in cur.fetchall()]
