"""Write services of the memory app (re-exported here; see each module)."""

from memory.services.identity import self_ensure
from memory.services.indexing import index_sync
from memory.services.lifecycle import node_confirm_use
from memory.services.nodes import (
    AutoLink,
    CreateResult,
    core_cap_enforce,
    edge_create,
    node_create,
    node_forget,
    node_mark_outdated,
    node_restore,
    node_set_tier,
    node_update,
)

__all__ = [
    "AutoLink", "CreateResult", "core_cap_enforce", "edge_create", "index_sync", "node_create", "node_forget",
    "node_mark_outdated", "node_restore", "node_set_tier", "node_update", "self_ensure",
    "node_confirm_use",
]
