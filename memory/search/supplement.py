"""The temporal supplement (reference §1.6 step 6): memories of a date window that fill a short result list.

A pure temporal query ("what did we do yesterday?") gets the newest memories of the window, as in the original.
A query with a topic ("what goal did I set this week?") gets the window's memories nearest to the query vector
instead, below the similarity threshold that kept them out of the direct hits; the original used recency for
both, which buries a weakly worded answer behind whatever happened last.
"""

from __future__ import annotations

from collections.abc import Collection

import numpy as np
from django.db import connection

from memory.domain import scoring
from memory.domain.scoring import RecallConf
from memory.models import NodeRow
from memory.search.filters import NODE_TABLE, Filters, where_sql
from memory.search.hybrid import Scored
from memory.search.semantic import vector_search


def temporal_supplement(
    filters: Filters, count: int, *, exclude: Collection[int] = (), default_space: str | None = None,
    vector: np.ndarray | None = None, conf: RecallConf = RecallConf(),
) -> list[Scored]:
    """Up to `count` memories passing `filters` (window included): nearest to `vector` when given, else current
    project first and newest first (the current project's factor applies to both orders)."""
    if count <= 0:
        return []
    if vector is not None:
        skip = set(exclude)
        near = [h for h in vector_search(vector, count + len(skip), filters) if h.row_id not in skip]
        spaces = dict(NodeRow.objects.filter(id__in=[h.row_id for h in near]).values_list("id", "space"))
        near.sort(key=lambda h: -h.cosine * scoring.space_factor(spaces.get(h.row_id), default_space, conf=conf))
        return [Scored(row_id=h.row_id, score=conf.temporal_supplement_score, source="temporal",
                       legs=("temporal",), raw_cosine=h.cosine) for h in near[:count]]
    where, params = where_sql(filters)
    exclude = list(exclude)
    if exclude:
        where += f" AND n.id NOT IN ({', '.join(['%s'] * len(exclude))})"
        params.extend(exclude)
    sql = f"SELECT n.id, n.space FROM {NODE_TABLE} n WHERE {where} AND n.is_self = %s ORDER BY n.created DESC, n.id " \
          f"LIMIT %s"
    with connection.cursor() as cur:
        cur.execute(sql, [*params, False, 3 * int(count)])
        rows = cur.fetchall()
    position = {row_id: i for i, (row_id, _) in enumerate(rows)}
    rows.sort(key=lambda r: (-scoring.space_factor(r[1], default_space, conf=conf), position[r[0]]))
    return [Scored(row_id=row_id, score=conf.temporal_supplement_score, source="temporal", legs=("temporal",))
            for row_id, _ in rows[:count]]
