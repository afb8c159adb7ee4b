"""A tier or space change (decay_manager's archivals, auto_cluster's spaces, a promotion) updates the row's columns
and the vec0 metadata that repeats them, and nothing else derived: before, each such write deleted and inserted
again the memory's tags, citations and outgoing edges and looked up its passages and vector (issue 13 item 7)."""

from __future__ import annotations

import re

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import runtime
from memory.backends import backend
from memory.domain.enums import Tier
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.rebuild import rebuild
from memory.services import edge_create, nodes_update
from tests.memory.test_rebuild_invariant import snapshot
from tests.memory.test_row_only_writes import DERIVED, _updated_columns, _vector_log_top

FILE_FACTS = {"file_hash", "file_mtime_ns", "file_size", "indexed_seq", "updated"}
VEC_METADATA_UPDATE = re.compile(r"^\s*UPDATE\s+\"?node_vec\"?\s+SET\s+type\s*=", re.IGNORECASE)


def _vec_metadata(uid: str) -> tuple[str, str]:
    """The tier and space the vector table repeats for the vector search's filters (vec0 on SQLite, node_vec's
    columns on PostgreSQL)."""
    _type, tier, space = backend().metadata(NodeRow.objects.get(uid=uid).id)
    return tier, space


def test_a_tier_and_a_space_change_update_the_row_and_the_vector_metadata_only(mem):
    a = mem("The billing service keeps invoices in PostgreSQL 16", tags=["db", "billing"], space="billing")
    b = mem("Invoices are exported every night to the finance share", tags=["billing"])
    edge_create(source_ref=a.id, target_ref=b.id)
    before, log_top = snapshot(), _vector_log_top()
    with CaptureQueriesContext(connection) as ctx:
        done = nodes_update(patches=[(a.id, NodePatch(tier=Tier.ARCHIVAL)), (b.id, NodePatch(space="billing"))])
    assert [n.tier for n in done] == [Tier.ARCHIVAL, Tier.WORKING] and done[1].space == "billing"
    sqls = [q["sql"] for q in ctx.captured_queries]
    derived = [s for s in sqls if DERIVED.search(s)]
    # the only derived statements: one vec0 metadata UPDATE per memory (no tag, citation, passage, edge, FTS
    # statement, no vector lookup)
    assert len(derived) == 2 and all(VEC_METADATA_UPDATE.match(s) for s in derived), derived
    assert {"tier", "space", "file_hash"} <= _updated_columns(sqls) <= {"tier", "space"} | FILE_FACTS
    assert _vector_log_top() > log_top  # the trigger on tier and space: every process's matrix reloads them
    after = snapshot()
    assert {k: after[k] for k in ("fts", "tags", "edges")} == {k: before[k] for k in ("fts", "tags", "edges")}
    # what the vector search filters on moved with the rows
    assert (_vec_metadata(a.id), _vec_metadata(b.id)) == (("archival", "billing"), ("working", "billing"))
    rebuild(runtime.store(), embedder=runtime.embedder(), verify=True)
    assert snapshot() == after
