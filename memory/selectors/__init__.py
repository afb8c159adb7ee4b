"""Read selectors of the memory app (re-exported here; see each module): nodes.py the memories' reads, health.py
the index's counts, drift and health report."""

from memory.selectors.health import (
    Drift,
    dangling_connections,
    health_report,
    index_counts,
    index_drift,
    index_extensions,
    index_model_id,
    model_status,
    rows_dated_after,
    rows_without_vector,
)
from memory.selectors.nodes import (
    MAX_MERGE_HOPS,
    MIN_PREFIX,
    FileSnapshot,
    LinkTarget,
    Neighbour,
    batch_connection_problems,
    deleted_id_get,
    link_targets,
    node_get,
    node_identical,
    node_neighbours,
    node_read,
    node_row_get,
    node_row_resolve,
    node_snapshot,
    row_by_uid,
    rows_search_by_title,
    self_defined_rows,
    self_get,
    self_row,
)

__all__ = [
    "MAX_MERGE_HOPS", "MIN_PREFIX", "Drift", "FileSnapshot", "LinkTarget", "Neighbour", "batch_connection_problems",
    "dangling_connections", "deleted_id_get", "health_report", "index_counts", "index_drift", "index_extensions",
    "index_model_id", "link_targets", "model_status", "node_get", "node_identical", "node_neighbours", "node_read",
    "node_row_get", "node_row_resolve", "node_snapshot", "row_by_uid", "rows_dated_after", "rows_search_by_title",
    "rows_without_vector", "self_defined_rows", "self_get", "self_row",
]
