"""The memories in scope, as the temporal parser may ask about them (memory.domain.temporal.Probe)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db import connection
from django.utils.dateparse import parse_datetime

from memory.domain.node import as_utc
from memory.search.filters import NODE_TABLE, Filters, matching_ids, where_sql


@dataclass(frozen=True)
class ScopeProbe:
    """Answers "does this period hold memories?" and "when was the newest one made?" under the hard filters."""

    filters: Filters

    def holds(self, after: datetime, before: datetime) -> bool:
        return bool(matching_ids(self.filters.with_window(after, before), limit=1))

    def newest(self) -> datetime | None:
        where, params = where_sql(self.filters)
        with connection.cursor() as cur:
            cur.execute(f"SELECT max(n.created) FROM {NODE_TABLE} n WHERE {where} AND n.is_self = %s", [*params, False])
            value = cur.fetchone()[0]
        if value is None:
            return None
        parsed = value if isinstance(value, datetime) else parse_datetime(str(value))
        return as_utc(parsed) if parsed is not None else None
