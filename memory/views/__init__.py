"""Web UI views of the memory app: the graph explorer, the node panel and its actions, stats.

Views parse requests and render; reads come from memory.ui_selectors and writes go through memory.services.
"""

from memory.views.graph import graph_data, graph_neighbourhood_data, graph_page, search
from memory.views.nodes import (
    node_connect,
    node_edit,
    node_forget,
    node_outdated,
    node_panel,
    node_restore,
    node_suggestions,
    node_tier,
)
from memory.views.stats import stats_page

__all__ = [
    "graph_data", "graph_neighbourhood_data", "graph_page", "node_connect", "node_edit", "node_forget",
    "node_outdated", "node_panel", "node_restore", "node_suggestions", "node_tier", "search", "stats_page",
]
