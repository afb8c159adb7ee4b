"""Write services of the memory app (re-exported here; see each module)."""

from memory.services.identity import self_ensure
from memory.services.indexing import index_sync, index_sync_unattended
from memory.services.lifecycle import node_confirm_use
from memory.services.links import AutoLink
from memory.services.nodes import (
    CreateResult,
    edge_create,
    node_create,
    nodes_create,
    node_forget,
    node_mark_outdated,
    node_restore,
    node_set_tier,
    node_update,
)
from memory.services.tiers import core_cap_enforce

__all__ = [
    "AutoLink", "CreateResult", "core_cap_enforce", "edge_create", "index_sync", "index_sync_unattended", "node_create",
    "node_forget", "nodes_create", "node_mark_outdated", "node_restore", "node_set_tier", "node_update", "self_ensure",
    "node_confirm_use",
]

from memory.services.audit import audit_note_many, audit_prune, audit_record  # noqa: E402
from memory.services.merge import (  # noqa: E402
    MergeResult,
    merge_history_prune,
    node_merge,
    nodes_consolidate,
    nodes_importance_set,
)
from memory.services.merge_undo import merge_history_get, merge_undo  # noqa: E402

__all__ += [
    "MergeResult", "audit_note_many", "audit_prune", "audit_record", "merge_history_get", "merge_history_prune",
    "merge_undo", "node_merge", "nodes_consolidate", "nodes_importance_set",
]

from memory.services.backup import backup_create, backup_list, backup_prune, backup_restore, backup_verify  # noqa: E402
from memory.services.importing import node_files_import, notes_import  # noqa: E402
from memory.services.portability import archive_read, memory_export, memory_import  # noqa: E402

__all__ += [
    "archive_read", "backup_create", "backup_list", "backup_prune", "backup_restore", "backup_verify",
    "memory_export", "memory_import", "node_files_import", "notes_import",
]

from memory.services.evidence import (  # noqa: E402
    evidence_append,
    evidence_record,
    evidence_sync,
    node_remember,
    nodes_remember,
)
from memory.services.batches import EdgeSpec, edges_create, nodes_update  # noqa: E402
from memory.services.guard import automated_writes  # noqa: E402
from memory.services.repair import connections_prune_dangling  # noqa: E402
from memory.services.session_state import session_state_set  # noqa: E402
from memory.services.trust import core_block_set, relation_create  # noqa: E402
from memory.services.verification import verification_record  # noqa: E402

__all__ += [
    "EdgeSpec", "automated_writes", "connections_prune_dangling", "edges_create", "nodes_update", "core_block_set",
    "evidence_append", "evidence_record", "evidence_sync", "node_remember", "nodes_remember", "relation_create",
    "session_state_set", "verification_record",
]
