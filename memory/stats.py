"""Read-only selectors for the stats page: counts by tier, type, space and edge type, growth, importance."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count
from django.db.models.functions import TruncMonth

from memory.domain.enums import NodeType, Tier
from memory.domain.node import utcnow
from memory.models import AuditRow, EdgeRow, NodeRow


@dataclass(frozen=True)
class Stats:
    """Counts for the stats page; lists are (label, count) in display order."""

    nodes: int
    edges: int
    outdated: int
    by_tier: list[tuple[str, int]]
    by_type: list[tuple[str, int]]
    by_space: list[tuple[str, int]]
    by_edge_type: list[tuple[str, int]]
    growth: list[tuple[str, int, int]]  # (YYYY-MM, created that month, cumulative)
    importance: list[tuple[str, int]]  # ten bins over [0, 1], labelled by their lower bound
    audit_ops: list[tuple[str, int]]


def _counts(values) -> dict:
    return {k: n for k, n in values.annotate(n=Count("id")).order_by()}


def stats_overview(*, now: datetime | None = None, space_limit: int = 12) -> Stats:
    """Counts by tier, type, space and edge type, monthly growth, and the importance histogram."""
    now = now or utcnow()
    by_tier = _counts(NodeRow.objects.values_list("tier"))
    by_type = _counts(NodeRow.objects.values_list("type"))
    spaces = sorted(_counts(NodeRow.objects.values_list("space")).items(), key=lambda kv: (-kv[1], kv[0] or ""))
    by_space = [(s or "(global)", n) for s, n in spaces[:space_limit]]
    if len(spaces) > space_limit:
        by_space.append(("(other spaces)", sum(n for _, n in spaces[space_limit:])))
    growth, running = [], 0
    for month, n in (NodeRow.objects.annotate(m=TruncMonth("created")).values_list("m")
                     .annotate(n=Count("id")).order_by("m")):
        running += n
        growth.append((month.strftime("%Y-%m"), n, running))
    bins = [0] * 10
    for value in NodeRow.objects.values_list("importance", flat=True):
        bins[min(9, max(0, math.floor(value * 10)))] += 1
    return Stats(
        nodes=sum(by_tier.values()), edges=EdgeRow.objects.count(),
        outdated=NodeRow.objects.filter(valid_until__lte=now).count(),
        by_tier=[(t.value, by_tier.get(t.value, 0)) for t in Tier],
        by_type=sorted(((t.value, by_type.get(t.value, 0)) for t in NodeType), key=lambda kv: (-kv[1], kv[0])),
        by_space=by_space,
        by_edge_type=sorted(_counts(EdgeRow.objects.values_list("edge_type")).items(), key=lambda kv: (-kv[1], kv[0])),
        growth=growth,
        importance=[(f"{i / 10:.1f}", n) for i, n in enumerate(bins)],
        audit_ops=sorted(_counts(AuditRow.objects.values_list("operation")).items(), key=lambda kv: (-kv[1], kv[0])),
    )

