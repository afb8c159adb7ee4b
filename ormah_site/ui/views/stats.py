"""The stats page: counts by tier, type and space, growth over time, the importance histogram (SVG)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from memory.stats import stats_overview
from ormah_site.ui.render import bar_chart, line_chart


@login_required
@require_GET
def stats_page(request: HttpRequest) -> HttpResponse:
    """Counts and charts of the whole memory."""
    stats = stats_overview()
    return render(request, "memory/stats.html", {
        "stats": stats,
        "tier_chart": bar_chart("Memories by tier", stats.by_tier),
        "type_chart": bar_chart("Memories by type", stats.by_type),
        "space_chart": bar_chart("Memories by space", stats.by_space),
        "edge_chart": bar_chart("Connections by type", stats.by_edge_type),
        "growth_chart": line_chart("Memories over time (cumulative)", [(m, total) for m, _, total in stats.growth]),
        "importance_chart": bar_chart("Importance (bins of 0.1)", stats.importance, horizontal=False),
    })
