"""The graph explorer (the home page): the page, its JSON data, neighbourhoods on demand, and search."""

from __future__ import annotations

import gzip
import json
import re
import time
from urllib.parse import quote_plus, urlencode

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_GET, require_POST
from pydantic import ValidationError

from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.search import SearchQuery
from memory.errors import OrmahError
from memory.search import recall
from memory.selectors import index_counts
from ormah_site.ui.positions import MAX_POSITIONS, positions_for_graph, positions_kept, positions_save
from ormah_site.ui.view_models.pills import pill
from memory.graph import (GRAPH_NODE_LIMIT, GraphFacets, GraphFilters, graph_export, graph_facets,
                          graph_neighbourhood)

SEARCH_LIMIT = 20
GRAPH_BIG = 1500  # above this many memories the explorer draws cheaper (static/ui/graph.js, BIG)
_ACCEPTS_GZIP = re.compile(r"\bgzip\b")
_TIERS = {t.value for t in Tier}
_TYPES = {t.value for t in NodeType}


def filters_from(params: QueryDict) -> GraphFilters:
    """GraphFilters from the explorer's query string; unknown tiers and types are ignored."""
    space = params.get("space")
    return GraphFilters(
        tiers=tuple(t for t in params.getlist("tier") if t in _TIERS),
        types=tuple(t for t in params.getlist("type") if t in _TYPES),
        space=None if space in (None, "*") else ("" if space == "-" else space),
        tag=(params.get("tag") or "").strip().lower() or None,
        show_hidden=params.get("hidden") in ("1", "on", "true"),
    )


def data_query(filters: GraphFilters, facets: GraphFacets) -> str:
    """The query string graph-data.js builds from the filters form as this page renders it (FormData order,
    URLSearchParams encoding), so that the page can ask for the graph data before any script has run."""
    types = [t for t in facets.types if t in filters.types]  # a select with several `selected` shows the last
    space = filters.space
    pairs = [("tier", t) for t in facets.tiers if t in filters.tiers]
    pairs += [("type", types[-1] if types else ""),
              ("space", "-" if space == "" else (space if space in facets.spaces else "*")),
              ("tag", filters.tag or "")]
    if filters.show_hidden:
        pairs.append(("hidden", "1"))
    return urlencode(pairs, safe="*", quote_via=quote_plus)


def search_scope(filters: GraphFilters) -> dict:
    """The SearchQuery fields that make search see exactly what the graph shows (one state for both)."""
    tiers = list(filters.tiers) or (None if filters.show_hidden else [Tier.CORE.value, Tier.WORKING.value])
    spaces = None if filters.space is None else ([None] if filters.space == "" else [filters.space])
    return {"include_outdated": filters.show_hidden, "tiers": tiers, "types": list(filters.types) or None,
            "spaces": spaces, "tags": [filters.tag] if filters.tag else None}


@login_required
@require_GET
def graph_page(request: HttpRequest) -> HttpResponse:
    """The explorer: Cytoscape canvas, filters, legend, search and the node panel."""
    filters = filters_from(request.GET)
    facets = graph_facets()
    return render(request, "memory/graph.html", {
        "empty": index_counts()["nodes"] <= 1,  # nothing but the self node: say how to add memories
        "facets": facets, "filters": filters, "limit": GRAPH_NODE_LIMIT, "big": GRAPH_BIG,
        "data_query": data_query(filters, facets),
        "focus": request.GET.get("focus", ""), "query": request.GET.get("q", ""),
        "edge_types": [e.value for e in EdgeType], "layout_scripts": not positions_kept(),
    })


@login_required
@require_GET
def graph_data(request: HttpRequest) -> HttpResponse:
    """Cytoscape elements for the filters (compact keys; see static/ui/graph.js), with their positions: cached, or
    for a big graph seen for the first time laid out here ("layout": "server"; ormah_site/ui/positions.py).

    Compact JSON, gzipped at level 1 when the browser takes gzip: at 5,000 memories (1.3 MB) that costs the server
    a third of the CPU of gzip_page's level 6 for 13 % more bytes, and this answer is what a visit waits for.
    """
    data = graph_export(filters=filters_from(request.GET), limit=GRAPH_NODE_LIMIT).as_dict()
    start = time.perf_counter()
    placed = positions_for_graph(nodes=data["nodes"], edges=data["edges"])
    data["pos"] = placed.pos
    if placed.computed:
        data["layout"] = "server"
    response = HttpResponse(json.dumps(data, separators=(",", ":")), content_type="application/json")
    response.headers["Server-Timing"] = f"positions;dur={(time.perf_counter() - start) * 1000:.1f}"
    patch_vary_headers(response, ("Accept-Encoding",))
    if _ACCEPTS_GZIP.search(request.headers.get("Accept-Encoding", "")):
        response.content = gzip.compress(response.content, compresslevel=1, mtime=0)
        response.headers["Content-Encoding"] = "gzip"
    return response


@login_required
@require_POST
def graph_positions(request: HttpRequest) -> JsonResponse:
    """Store where the explorer drew the memories ({"pos": {id: [x, y]}}), so the next visit skips the layout."""
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        return JsonResponse({"error": "bad_request", "message": "The body must be JSON."}, status=400)
    pos = body.get("pos") if isinstance(body, dict) else None
    if not isinstance(pos, dict) or len(pos) > MAX_POSITIONS:
        return JsonResponse({"error": "bad_request", "message": "Send {\"pos\": {id: [x, y]}}."}, status=400)
    return JsonResponse({"saved": positions_save(positions=pos)})


@login_required
@require_GET
@gzip_page
def graph_neighbourhood_data(request: HttpRequest, uid: str) -> JsonResponse:
    """A memory and its direct neighbours, for double-click expansion and for refreshing after an edit."""
    try:
        return JsonResponse(graph_neighbourhood(ref=uid).as_dict())
    except OrmahError as exc:
        return JsonResponse({"error": exc.code, "message": exc.message}, status=exc.http_status)


@login_required
@require_GET
def search(request: HttpRequest) -> HttpResponse:
    """Search results (hybrid recall) as a partial; graph.js highlights and centres the hits."""
    text = request.GET.get("q", "").strip()
    filters = filters_from(request.GET)
    hits, error = [], None
    if text:
        try:
            query = SearchQuery(query=text, limit=SEARCH_LIMIT, **search_scope(filters))
            hits = recall(query=query)
        except ValidationError:
            error = "That search is too long."
    return render(request, "memory/_search_results.html", {
        "query": text, "hits": [(h, [pill(w) for w in h.warnings]) for h in hits],
        "hit_ids": [h.node_id for h in hits], "error": error,
    })
