"""Read-only selectors for the graph explorer: the export with neighbourhood loading, and the filter facets.

Everything returned here is fully evaluated (lists, dicts, dataclasses), so templates never run a query while
rendering. Nothing in this module changes the index or the files.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, Count, IntegerField, QuerySet, Value, When

from memory.cards import node_label
from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.node import utcnow
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.selectors import node_row_get, self_row

GRAPH_NODE_LIMIT = 5000
REASON_CHARS = 160
SUPERSEDED_BY = "superseded_by"  # the trust marker a consolidation leaves on the memories it replaced
NEIGHBOURHOOD_LIMIT = 400

_TIER_RANK = Case(
    When(tier=Tier.CORE, then=Value(0)), When(tier=Tier.WORKING, then=Value(1)), default=Value(2),
    output_field=IntegerField(),
)
_NODE_FIELDS = ("id", "uid", "title", "content", "type", "tier", "space", "is_self", "importance", "access_count",
                "valid_until")


# ---------------------------------------------------------------------------
# Graph export
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class GraphFilters:
    """What the graph explorer shows. `space=""` means global memories only; None means every space."""

    tiers: tuple[str, ...] = ()
    types: tuple[str, ...] = ()
    space: str | None = None
    tag: str | None = None
    show_hidden: bool = False  # outdated memories and the archival tier


@dataclass
class GraphData:
    """Cytoscape-ready nodes and edges (compact keys, see static/ui/graph.js) and whether the set was cut."""

    nodes: list[dict] = field(default_factory=list)
    edges: list[list] = field(default_factory=list)
    total: int = 0
    truncated: bool = False

    def as_dict(self) -> dict:
        return {"nodes": self.nodes, "edges": self.edges, "total": self.total, "truncated": self.truncated}


def _filtered(filters: GraphFilters, now: datetime) -> QuerySet[NodeRow]:
    qs = NodeRow.objects.all()
    if filters.tiers:
        qs = qs.filter(tier__in=filters.tiers)
    elif not filters.show_hidden:
        qs = qs.exclude(tier=Tier.ARCHIVAL)
    if not filters.show_hidden:
        qs = qs.exclude(valid_until__lte=now)
    if filters.types:
        qs = qs.filter(type__in=filters.types)
    if filters.space == "":
        qs = qs.filter(space__isnull=True)
    elif filters.space:
        qs = qs.filter(space=filters.space)
    if filters.tag:
        qs = qs.filter(id__in=NodeTagRow.objects.filter(tag=filters.tag).values("node_id"))
    return qs


def _node_data(values: tuple, identity: set[int], now: datetime) -> dict:
    pk, uid, title, content, type_, tier, space, is_self, importance, access_count, valid_until = values
    data = {"id": uid, "label": node_label(title, content), "type": type_, "tier": tier,
            "space": space or "", "imp": round(importance, 3), "acc": access_count}
    if is_self:
        data["self"] = 1
    if pk in identity:
        data["idn"] = 1
    if valid_until is not None and valid_until <= now:
        data["old"] = 1
    return data


def _identity_ids() -> set[int]:
    me = self_row()
    if me is None:
        return set()
    return set(EdgeRow.objects.filter(source=me, edge_type=EdgeType.DEFINES).values_list("target_id", flat=True))


def _badges(pks: set[int], now: datetime) -> dict[int, dict]:
    """Per shown memory: "ctr" when a live memory contradicts it, "sup" when it was superseded (a newer memory
    evolved from it, or a consolidation replaced it)."""
    out: dict[int, dict] = {}
    kinds = (EdgeType.CONTRADICTS.value, EdgeType.EVOLVED_FROM.value)
    for s, t, kind, s_until, t_until in EdgeRow.objects.filter(edge_type__in=kinds).values_list(
            "source_id", "target_id", "edge_type", "source__valid_until", "target__valid_until"):
        if kind == EdgeType.CONTRADICTS.value:
            if s in pks and not (t_until is not None and t_until <= now):
                out.setdefault(s, {})["ctr"] = 1
            if t in pks and not (s_until is not None and s_until <= now):
                out.setdefault(t, {})["ctr"] = 1
        elif t in pks:
            out.setdefault(t, {})["sup"] = 1
    for pk in NodeRow.objects.filter(trust_json__contains=f'"{SUPERSEDED_BY}"').values_list("id", flat=True):
        if pk in pks:
            out.setdefault(pk, {})["sup"] = 1
    return out


def _edge(uid_of: dict[int, str], s: int, t: int, kind: str, w: float, reason: str | None) -> list:
    edge = [uid_of[s], uid_of[t], kind, round(w, 3)]
    if reason:
        edge.append(reason if len(reason) <= REASON_CHARS else reason[: REASON_CHARS - 1].rstrip() + "…")
    return edge


def _export(rows: list[tuple], *, now: datetime, edges_qs: QuerySet[EdgeRow], with_degree: bool) -> GraphData:
    identity = _identity_ids()
    uid_of = {r[0]: r[1] for r in rows}
    nodes = [_node_data(r, identity, now) for r in rows]
    badges = _badges(set(uid_of), now)
    for pk, data in zip(uid_of, nodes):
        data.update(badges.get(pk, {}))
    edges = [_edge(uid_of, s, t, kind, w, reason)
             for s, t, kind, w, reason in edges_qs.values_list("source_id", "target_id", "edge_type", "weight",
                                                                "reason")
             if s in uid_of and t in uid_of]
    if with_degree:
        degree: Counter[int] = Counter()
        ids = list(uid_of)
        for key in ("source_id", "target_id"):
            for pk, n in (EdgeRow.objects.filter(**{f"{key}__in": ids}).values_list(key)
                          .annotate(n=Count("id")).order_by()):
                degree[pk] += n
        shown: Counter[str] = Counter()
        for e in edges:
            shown[e[0]] += 1
            shown[e[1]] += 1
        for pk, data in zip(uid_of, nodes):
            hidden = degree[pk] - shown[data["id"]]
            if hidden > 0:
                data["more"] = hidden
    return GraphData(nodes=nodes, edges=edges, total=len(nodes))


def graph_export(*, filters: GraphFilters = GraphFilters(), limit: int = GRAPH_NODE_LIMIT,
                 now: datetime | None = None) -> GraphData:
    """The memories the filters select, most important first, cut at `limit` (the self node always, on top).

    When the set is cut, each node carries `more`: how many of its edges lead outside the graph, so the
    explorer can offer to expand it (graph_neighbourhood).
    """
    now = now or utcnow()
    qs = _filtered(filters, now) | NodeRow.objects.filter(is_self=True)  # one table, no join: no duplicates
    total = qs.count()
    ordered = qs.annotate(tier_rank=_TIER_RANK).order_by("-is_self", "tier_rank", "-importance", "-access_count",
                                                         "uid")
    rows = list(ordered.values_list(*_NODE_FIELDS)[: limit + 1])  # the self node comes on top of `limit`
    if len(rows) > limit and not rows[0][_NODE_FIELDS.index("is_self")]:
        rows = rows[:limit]
    truncated = total > len(rows)
    # Only the source side is filtered in SQL: with both sides as IN lists SQLite probes the (source, target)
    # index for every pair (25 million probes at 5,000 nodes). _export drops edges whose target is not shown.
    # The shown set goes in as a subquery: 5,000 ids as a parameter list cost Django ~30 ms to prepare.
    shown = ordered.values("id")[: limit + 1] if truncated else qs.values("id")
    data = _export(rows, now=now, edges_qs=EdgeRow.objects.filter(source_id__in=shown), with_degree=truncated)
    data.total, data.truncated = total, truncated
    return data


def graph_neighbourhood(*, ref: str, limit: int = NEIGHBOURHOOD_LIMIT, now: datetime | None = None) -> GraphData:
    """A memory, the memories one edge away (most important first, at most `limit`) and the edges among them.

    Raises NodeNotFound or AmbiguousNodeRef for a bad reference.
    """
    now = now or utcnow()
    centre = node_row_get(ref=ref)
    near = set(EdgeRow.objects.filter(source=centre).values_list("target_id", flat=True))
    near |= set(EdgeRow.objects.filter(target=centre).values_list("source_id", flat=True))
    near.discard(centre.id)
    rows = list(NodeRow.objects.filter(id__in=[centre.id, *near])
                .annotate(centre=Case(When(id=centre.id, then=Value(0)), default=Value(1),
                                      output_field=IntegerField()))
                .order_by("centre", "-importance", "uid").values_list(*_NODE_FIELDS)[: limit + 1])
    ids = [r[0] for r in rows]
    data = _export(rows, now=now, edges_qs=EdgeRow.objects.filter(source_id__in=ids), with_degree=True)
    data.truncated = len(near) > limit
    data.total = len(near) + 1
    return data


@dataclass(frozen=True)
class GraphFacets:
    """Choices for the explorer's filters."""

    types: list[str]
    tiers: list[str]
    spaces: list[str]
    tags: list[str]
    edge_types: list[str]


def graph_facets(*, tag_limit: int = 200) -> GraphFacets:
    """The spaces and the most used tags in the index, with every type, tier and edge type."""
    spaces = sorted(s for s in NodeRow.objects.exclude(space__isnull=True).values_list("space", flat=True)
                    .distinct() if s)
    tags = [t for t, _ in NodeTagRow.objects.values_list("tag").annotate(n=Count("id"))
            .order_by("-n", "tag")[:tag_limit]]
    return GraphFacets(types=[t.value for t in NodeType], tiers=[t.value for t in Tier], spaces=spaces,
                       tags=sorted(tags), edge_types=[e.value for e in EdgeType])
