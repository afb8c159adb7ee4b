"""The derived index equals what a full rebuild from the files produces, after a scenario of writes."""

from __future__ import annotations

from memory import runtime
from memory.domain.enums import EdgeType
from memory.domain.requests import NodePatch
from memory.models import EdgeRow, NodeRow, NodeTagRow
from memory.rebuild import rebuild
from memory.search import vectors
from memory.services import (
    edge_create,
    index_sync,
    node_forget,
    node_mark_outdated,
    node_update,
    self_ensure,
)

ROW_FIELDS = [f.name for f in NodeRow._meta.concrete_fields if f.name not in ("id", "indexed_seq")]


def snapshot() -> dict:
    """Every derived row keyed by node uid (row ids differ between builds, uids do not)."""
    uid_of = dict(NodeRow.objects.values_list("id", "uid"))
    vecs = {uid_of[row_id]: blob for row_id, blob in vectors.all_vectors()}
    return {
        "nodes": {r["uid"]: r for r in NodeRow.objects.values(*ROW_FIELDS)},
        "edges": sorted((uid_of[s], uid_of[t], e, w, r) for s, t, e, w, r in
                        EdgeRow.objects.values_list("source_id", "target_id", "edge_type", "weight", "reason")),
        "tags": sorted((uid_of[n], t) for n, t in NodeTagRow.objects.values_list("node_id", "tag")),
        "vectors": vecs,
        "fts": fts_rows(),
    }


def fts_rows() -> list:
    from memory.backends import backend

    return backend().fulltext_rows()


def test_rebuild_from_files_equals_live_index_after_scenario(mem, home):
    self_ensure(name="Dana")
    a = mem("Dana prefers tabs over spaces in every editor", type="preference", about_self=True)
    b = mem("The billing service uses PostgreSQL 16 for invoices", space="billing", tags=["db"])
    c = mem("Deploys happen on Tuesdays after the release checklist", type="procedure")
    node_update(ref=b.id, patch=NodePatch(content="The billing service uses PostgreSQL 17 for invoices"))
    edge_create(source_ref=c.id, target_ref=b.id, edge=EdgeType.DEPENDS_ON, weight=0.8, reason="deploys touch db")
    node_mark_outdated(ref=a.id, reason="switched to spaces")
    d = mem("A memory that will be forgotten soon enough")
    node_forget(ref=d.id)
    store = runtime.store()
    # a manual edit, a manual delete and a malformed file, then the sync the watcher would run
    path_c = store.path_for(c.id)
    path_c.write_text(path_c.read_text().replace("Tuesdays", "Thursdays"))
    store.path_for(b.id).unlink()
    (store.root / "nodes" / "fact_broken_deadbeef.md").write_text("---\nid: [unclosed\n---\n\nbody\n")
    report = index_sync()
    assert [p.endswith("fact_broken_deadbeef.md") for p, _ in report.malformed] == [True]
    assert NodeRow.objects.get(uid=c.id).content.startswith("Deploys happen on Thursdays")
    assert not NodeRow.objects.filter(uid=b.id).exists()

    live = snapshot()
    rebuilt_report = rebuild(store, embedder=runtime.embedder(), verify=True)  # every row from its file

    assert rebuilt_report.embedded == 0  # the cache saved every embedding
    assert snapshot() == live
    assert set(live["nodes"]) == {n for n in live["nodes"]} and len(live["nodes"]) == 3  # self, a, c
