"""Read-only selectors for the web UI: the graph export with neighbourhood loading, node details, facets and stats.

Everything returned here is fully evaluated (lists, dicts, dataclasses), so templates never run a query while
rendering. Writes go through memory.services; nothing in this module changes the index or the files.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, Count, IntegerField, Q, QuerySet, Value, When
from django.db.models.functions import TruncMonth

from memory import runtime
from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.node import Node, utcnow
from memory.domain.requests import auto_title
from memory.models import AuditRow, EdgeRow, NodeRow, NodeTagRow
from memory.selectors import Neighbour, node_neighbours, node_read, node_row_get, self_row

GRAPH_NODE_LIMIT = 5000
NEIGHBOURHOOD_LIMIT = 400
LABEL_CHARS = 48
AUDIT_LIMIT = 25

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


def _label(title: str, content: str) -> str:
    text = title or auto_title(content)
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1].rstrip() + "…"


def _node_data(values: tuple, identity: set[int], now: datetime) -> dict:
    pk, uid, title, content, type_, tier, space, is_self, importance, access_count, valid_until = values
    data = {"id": uid, "label": _label(title, content), "type": type_, "tier": tier,
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


def _export(rows: list[tuple], *, now: datetime, edges_qs: QuerySet[EdgeRow], with_degree: bool) -> GraphData:
    identity = _identity_ids()
    uid_of = {r[0]: r[1] for r in rows}
    nodes = [_node_data(r, identity, now) for r in rows]
    edges = [[uid_of[s], uid_of[t], kind, round(w, 3)]
             for s, t, kind, w in edges_qs.values_list("source_id", "target_id", "edge_type", "weight")
             if s in uid_of and t in uid_of]
    if with_degree:
        degree: Counter[int] = Counter()
        ids = list(uid_of)
        for key in ("source_id", "target_id"):
            for pk, n in (EdgeRow.objects.filter(**{f"{key}__in": ids}).values_list(key)
                          .annotate(n=Count("id")).order_by()):
                degree[pk] += n
        shown: Counter[str] = Counter()
        for s, t, _, _ in edges:
            shown[s] += 1
            shown[t] += 1
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
    qs = (_filtered(filters, now) | NodeRow.objects.filter(is_self=True)).distinct()
    total = qs.count()
    rows = list(qs.annotate(tier_rank=_TIER_RANK)
                .order_by("-is_self", "tier_rank", "-importance", "-access_count", "uid")
                .values_list(*_NODE_FIELDS)[: limit + 1])  # the self node comes on top of `limit`
    if len(rows) > limit and not rows[0][_NODE_FIELDS.index("is_self")]:
        rows = rows[:limit]
    truncated = total > len(rows)
    # Only the source side is filtered in SQL: with both sides as IN lists SQLite probes the (source, target)
    # index for every pair (25 million probes at 5,000 nodes). _export drops edges whose target is not shown.
    ids = [r[0] for r in rows]
    data = _export(rows, now=now, edges_qs=EdgeRow.objects.filter(source_id__in=ids), with_degree=truncated)
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


# ---------------------------------------------------------------------------
# Node details
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class EdgeView:
    uid: str
    short_id: str
    label: str
    edge_type: str
    weight: float
    reason: str | None
    direction: str  # "out" | "in"


@dataclass(frozen=True)
class AuditEntry:
    operation: str
    performed_at: datetime
    detail: dict
    snapshot: str


@dataclass(frozen=True)
class NodeDetail:
    """Everything the node panel shows: the node as its file says, edges, identity and audit history."""

    node: Node
    file_path: str
    file_hash: str
    label: str
    outdated: bool
    is_self: bool
    defined_by_self: bool
    defines_count: int
    edges_out: list[EdgeView]
    edges_in: list[EdgeView]
    audit: list[AuditEntry]


def _edge_view(n: Neighbour) -> EdgeView:
    return EdgeView(uid=n.row.uid, short_id=n.row.short_id, label=_label(n.row.title, n.row.content),
                    edge_type=n.edge_type, weight=n.weight, reason=n.reason, direction=n.direction)


def node_audit(*, node_uid: str, limit: int = AUDIT_LIMIT) -> list[AuditEntry]:
    """The audit ledger of one memory, newest first."""
    return [AuditEntry(operation=a.operation, performed_at=a.performed_at, detail=a.detail, snapshot=a.snapshot)
            for a in AuditRow.objects.filter(node_uid=node_uid).order_by("-performed_at", "-id")[:limit]]


def node_detail(*, ref: str, now: datetime | None = None) -> NodeDetail:
    """The node panel's data for an id or unique prefix; the node itself is read from its markdown file.

    Raises NodeNotFound or AmbiguousNodeRef.
    """
    now = now or utcnow()
    row = node_row_get(ref=ref)
    node, stored = node_read(store=runtime.store(), row=row)
    neighbours = sorted(node_neighbours(row=row), key=lambda n: (n.edge_type, -n.weight, n.row.uid))
    return NodeDetail(
        node=node, file_path=row.file_path, file_hash=stored.hash, label=_label(node.title or "", node.content),
        outdated=node.is_outdated(now), is_self=row.is_self,
        defined_by_self=any(n.direction == "in" and n.edge_type == EdgeType.DEFINES and n.row.is_self
                            for n in neighbours),
        defines_count=sum(1 for n in neighbours if n.direction == "out" and n.edge_type == EdgeType.DEFINES),
        edges_out=[_edge_view(n) for n in neighbours if n.direction == "out"],
        edges_in=[_edge_view(n) for n in neighbours if n.direction == "in"],
        audit=node_audit(node_uid=row.uid),
    )


def node_file_hash(*, ref: str) -> str:
    """The hash of a memory's file as it is on disk now (to detect edits made while a form was open)."""
    return node_read(store=runtime.store(), row=node_row_get(ref=ref))[1].hash


@dataclass(frozen=True)
class NodeOption:
    uid: str
    short_id: str
    label: str


def node_suggest(*, text: str, exclude: str | None = None, limit: int = 12) -> list[NodeOption]:
    """Memories whose title or content contains `text` (for the connect form), most important first."""
    text = text.strip()
    if not text:
        return []
    qs = NodeRow.objects.filter(Q(title__icontains=text) | Q(content__icontains=text) | Q(uid__startswith=text.lower()))
    if exclude:
        qs = qs.exclude(uid=exclude)
    return [NodeOption(uid=u, short_id=s, label=_label(t, c))
            for u, s, t, c in qs.order_by("-importance", "uid").values_list("uid", "short_id", "title", "content")[:limit]]


def node_labels(*, uids: list[str]) -> dict[str, str]:
    """Display labels for the given ids (unknown ids are left out)."""
    return {u: _label(t, c) for u, t, c in NodeRow.objects.filter(uid__in=uids).values_list("uid", "title", "content")}


# ---------------------------------------------------------------------------
# Stats
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Cards (proposal review, whisper screens)
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class NodeCard:
    """A memory as review screens show it; `exists` is False when it has been forgotten or merged away."""

    uid: str
    short_id: str
    label: str
    content: str
    type: str
    tier: str
    space: str | None
    tags: tuple[str, ...]
    importance: float
    access_count: int
    exists: bool = True


def node_cards(*, uids: list[str]) -> dict[str, NodeCard]:
    """Cards for the given ids from the index; unknown ids get a placeholder card with exists=False."""
    found = {r[0]: NodeCard(uid=r[0], short_id=r[1], label=_label(r[2], r[3]), content=r[3], type=r[4], tier=r[5],
                            space=r[6], tags=tuple(r[7].split()), importance=r[8], access_count=r[9])
             for r in NodeRow.objects.filter(uid__in=list(uids)).values_list(
                 "uid", "short_id", "title", "content", "type", "tier", "space", "tags_text", "importance",
                 "access_count")}
    return {u: found.get(u) or NodeCard(uid=u, short_id=u[:8], label="(no longer in memory)", content="", type="",
                                        tier="", space=None, tags=(), importance=0.0, access_count=0, exists=False)
            for u in uids}
