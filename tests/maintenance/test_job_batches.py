"""The jobs' cheaper paths decide and write exactly what the old ones did: the vectorised neighbour search against
the per-row loop it replaced, and the batched writes (several per lock hold) against one service call per write.

Twin memories (same text, same clock) are written once each way in one real store; their files must then hold the
same bytes, ids aside (and `updated`, which edge_create stamps with the wall clock)."""

from __future__ import annotations

import re

from datetime import UTC, datetime

import numpy as np
import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from maintenance.detectors.similarity import VectorTable, nearest
from memory import runtime
from memory.domain.enums import EdgeType, Tier
from memory.domain.requests import NodePatch
from memory.errors import NodeNotFound, OrmahError, PayloadTooLarge, ProtectedNode
from memory.models import AuditRow, EdgeRow, NodeRow
from memory.services import EdgeSpec, automated_writes, edge_create, edges_create, node_update, nodes_update

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
TEXTS = ["The billing service runs on port 8080", "Grafana shows the billing latency", "Invoices go out nightly",
         "The invoice job retries three times", "Retries use exponential backoff", "Backups run at 2am",
         "Restic keeps 30 daily snapshots"]


def nearest_per_row(table: VectorTable, row_ids, *, k: int, min_cos: float, allowed=None):
    """The loop `nearest` used before it was vectorised (maintenance/detectors/similarity.py, session 8)."""
    out = {}
    mask = None if allowed is None else np.isin(table.row_ids, np.fromiter(allowed, dtype=np.int64))
    pos = table.positions(row_ids)
    ids = [r for r in row_ids if int(r) in pos]
    for start in range(0, len(ids), 256):
        chunk = ids[start:start + 256]
        sims = table.matrix[[pos[int(r)] for r in chunk]] @ table.matrix.T
        if mask is not None:
            sims[:, ~mask] = -2.0
        for i, r in enumerate(chunk):
            sims[i, pos[int(r)]] = -2.0
        take = min(k, sims.shape[1])
        top = np.argpartition(-sims, take - 1, axis=1)[:, :take]
        for i, r in enumerate(chunk):
            order = top[i][np.argsort(-sims[i, top[i]])]
            out[int(r)] = [(int(table.row_ids[j]), float(sims[i, j])) for j in order if sims[i, j] >= min_cos]
    return out


@pytest.mark.parametrize("k,min_cos,masked", [(6, 0.0, False), (15, 0.1, True), (20, -1.0, False), (3, 0.3, True)])
def test_nearest_finds_what_the_per_row_loop_found_ties_and_masks_included(k, min_cos, masked):
    rng = np.random.default_rng(7)
    base = rng.standard_normal((40, 16)).astype(np.float32)
    vecs = np.concatenate([base, base[:25], base[:10]])  # exact copies: equal cosines, ties to order
    rows = [(1000 + i, v.tobytes()) for i, v in enumerate(vecs)]
    table = VectorTable.from_rows(rows)
    ids = [r for r, _ in rows][::-1] + [99]  # an id without a vector is skipped by both
    allowed = {1000 + i for i in range(0, len(rows), 2)} if masked else None
    got = nearest(table, ids, k=k, min_cos=min_cos, allowed=allowed)
    assert got == nearest_per_row(table, ids, k=k, min_cos=min_cos, allowed=allowed)
    assert len(got) == len(rows)


def test_nearest_on_the_stored_vectors_of_a_real_store(remember):
    from maintenance.selectors import vector_table

    nodes = [remember(t, now=T0) for t in TEXTS + TEXTS[:3]]
    table = vector_table()
    ids = [int(r) for r in table.row_ids]
    assert len(ids) == len(nodes)
    assert nearest(table, ids, k=4, min_cos=0.2) == nearest_per_row(table, ids, k=4, min_cos=0.2)


def _twins(remember) -> tuple[list, list]:
    return [remember(t, now=T0) for t in TEXTS], [remember(t, now=T0) for t in TEXTS]


def _file(node_id: str, ids: dict[str, str]) -> str:
    text = runtime.store().path_for(node_id).read_text()
    for old, new in ids.items():
        text = text.replace(old, new)
    return "\n".join(line for line in text.splitlines() if not line.startswith("updated:"))


def test_nodes_update_writes_what_node_update_writes_one_by_one(remember):
    singles, batched = _twins(remember)
    patches = [NodePatch(tier=Tier.ARCHIVAL), NodePatch(space="billing"), NodePatch(space="ops"),
               NodePatch(tier=Tier.ARCHIVAL), NodePatch(space="billing"), NodePatch(tier=Tier.ARCHIVAL),
               NodePatch(space="ops")]
    now = datetime(2026, 3, 9, tzinfo=UTC)
    for node, patch in zip(singles, patches):
        node_update(ref=node.id, patch=patch, now=now)
    results = nodes_update(patches=[(n.id, p) for n, p in zip(batched, patches)], now=now)
    assert [r.id for r in results] == [n.id for n in batched]
    for one, other in zip(singles, batched):
        assert _file(other.id, {other.id: one.id}) == _file(one.id, {})
        row_one, row_other = NodeRow.objects.get(uid=one.id), NodeRow.objects.get(uid=other.id)
        assert (row_other.tier, row_other.space, row_other.updated) == (row_one.tier, row_one.space, row_one.updated)
    audits = lambda nodes: [(a.operation, a.detail) for n in nodes for a in AuditRow.objects.filter(  # noqa: E731
        node_uid=n.id, operation="update")]
    assert audits(batched) == audits(singles)
    assert len(audits(singles)) == 7


def test_edges_create_writes_what_edge_create_writes_one_by_one(remember):
    singles, batched = _twins(remember)
    pairs = [(0, 1), (0, 2), (3, 4), (5, 6), (2, 0), (6, 5)]  # the same source twice in one hold, and both ways
    for a, b in pairs:
        edge_create(source_ref=singles[a].id, target_ref=singles[b].id, edge=EdgeType.SUPPORTS, weight=0.71,
                    reason="auto-linked at 0.71 similarity")
    results = edges_create(edges=[EdgeSpec(batched[a].id, batched[b].id, EdgeType.SUPPORTS, 0.71,
                                           "auto-linked at 0.71 similarity") for a, b in pairs])
    assert [r.target for r in results] == [batched[b].id for _, b in pairs]
    ids = {o.id: s.id for s, o in zip(singles, batched)}
    for one, other in zip(singles, batched):
        assert _file(other.id, ids) == _file(one.id, {})
    edges = lambda nodes: sorted((s, t, e, w, r) for s, t, e, w, r in EdgeRow.objects.filter(  # noqa: E731
        source__uid__in=[n.id for n in nodes]).values_list("source__uid", "target__uid", "edge_type", "weight",
                                                           "reason"))
    assert sorted((ids[s], ids[t], e, w, r) for s, t, e, w, r in edges(batched)) == edges(singles)
    assert len(edges(singles)) == 6


GONE = "0badc0de-0000-4000-8000-00000000dead"


def test_edges_of_one_source_in_a_hold_write_what_edge_create_writes_one_by_one(remember):
    """Several edges of one source in one hold (one read and one write of its file), interleaved with another
    source's, an edge already held, a second edge type to the same target and the failures edge_create raises."""
    singles, batched = _twins(remember)
    specs = [(0, 1, EdgeType.SUPPORTS, 0.71), (0, 2, EdgeType.SUPPORTS, 0.72), (3, 4, EdgeType.RELATED_TO, 0.7),
             (0, 1, EdgeType.SUPPORTS, 0.71), (0, 1, EdgeType.PART_OF, 0.8), (0, None, EdgeType.SUPPORTS, 0.7),
             (0, 0, EdgeType.SUPPORTS, 0.7), (0, 5, EdgeType.SUPPORTS, 1.5), (0, 6, EdgeType.SUPPORTS, 0.66)]

    def one_by_one(a, b, edge, weight):
        try:
            return edge_create(source_ref=singles[a].id, target_ref=GONE if b is None else singles[b].id, edge=edge,
                               weight=weight, reason=f"auto-linked at {weight:.2f} similarity")
        except OrmahError as exc:
            return exc

    expected = [one_by_one(*spec) for spec in specs]
    got = edges_create(edges=[EdgeSpec(batched[a].id, GONE if b is None else batched[b].id, edge, weight,
                                       f"auto-linked at {weight:.2f} similarity") for a, b, edge, weight in specs],
                       per_hold=len(specs))
    assert [type(r) for r in got] == [type(r) for r in expected]
    assert [type(r).__name__ for r in got[5:8]] == ["NodeNotFound", "ValidationFailed", "ValidationFailed"]
    ids = {o.id: s.id for s, o in zip(singles, batched)}
    assert [(ids[r.target], r.edge, r.weight) for r in got if not isinstance(r, OrmahError)] == \
        [(r.target, r.edge, r.weight) for r in expected if not isinstance(r, OrmahError)]
    for one, other in zip(singles, batched):
        assert _file(other.id, ids) == _file(one.id, {})
    edges = lambda nodes: sorted((s, t, e, w) for s, t, e, w in EdgeRow.objects.filter(  # noqa: E731
        source__uid__in=[n.id for n in nodes]).values_list("source__uid", "target__uid", "edge_type", "weight"))
    assert sorted((ids[s], ids[t], e, w) for s, t, e, w in edges(batched)) == edges(singles)


def test_the_edges_of_one_source_in_a_hold_cost_one_write_of_its_file(remember, monkeypatch):
    import os

    a, b, c, d, e, f = (remember(t, now=T0, auto_link=False) for t in TEXTS[:6])
    calls = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: calls.append(fd) or real(fd))
    edge_create(source_ref=f.id, target_ref=e.id)
    one_edge = len(calls)
    calls.clear()
    edges_create(edges=[EdgeSpec(a.id, target) for target in (b.id, c.id, d.id, e.id)], per_hold=4)
    assert one_edge > 0
    assert len(calls) == one_edge
    assert sorted(EdgeRow.objects.filter(source__uid=a.id).values_list("target__uid", flat=True)) == \
        sorted([b.id, c.id, d.id, e.id])


def test_a_refused_source_refuses_only_the_edges_that_would_change_it(remember):
    a, b, c = (remember(t, now=T0, auto_link=False) for t in TEXTS[:3])
    edge_create(source_ref=a.id, target_ref=b.id, weight=0.7)
    node_update(ref=a.id, patch=NodePatch(read_only=True))
    before = runtime.store().path_for(a.id).read_bytes()
    with automated_writes("job auto_linker"):
        got = edges_create(edges=[EdgeSpec(a.id, b.id, weight=0.7), EdgeSpec(a.id, c.id, weight=0.7),
                                  EdgeSpec(a.id, GONE, weight=0.7)])
    assert [type(r) for r in got][1:] == [ProtectedNode, NodeNotFound]
    assert got[0].target == b.id
    assert runtime.store().path_for(a.id).read_bytes() == before
    assert list(EdgeRow.objects.filter(source__uid=a.id).values_list("target__uid", flat=True)) == [b.id]


def test_a_missing_source_fails_each_of_its_edges_and_not_the_others(remember):
    a, b = (remember(t, now=T0, auto_link=False) for t in TEXTS[:2])
    got = edges_create(edges=[EdgeSpec(GONE, a.id), EdgeSpec(a.id, b.id), EdgeSpec(GONE, b.id)])
    assert [type(r) for r in got] == [NodeNotFound, type(got[1]), NodeNotFound]
    assert not isinstance(got[1], OrmahError)
    assert list(EdgeRow.objects.filter(source__uid=a.id).values_list("target__uid", flat=True)) == [b.id]


def test_edges_given_id_prefixes_resolve_as_edge_create_resolves_them(remember):
    a, b, c = (remember(t, now=T0, auto_link=False) for t in TEXTS[:3])
    got = edges_create(edges=[EdgeSpec(a.id[:8].upper(), b.id[:8]), EdgeSpec(f" {a.id} ", c.id), EdgeSpec(a.id, "ab")])
    assert [r.target for r in got[:2]] == [b.id, c.id]
    assert type(got[2]).__name__ == "ValidationFailed"
    targets = EdgeRow.objects.filter(source__uid=a.id).values_list("target__uid", flat=True)
    assert sorted(targets) == sorted([b.id, c.id])


def test_a_failing_item_is_returned_as_its_error_and_the_others_are_written(remember):
    a, b, c = (remember(t, now=T0) for t in TEXTS[:3])
    results = nodes_update(patches=[(a.id, NodePatch(space="x")), ("0badc0de-0000-4000-8000-00000000dead",
                                                                  NodePatch(space="x")), (c.id, NodePatch(space="x"))],
                           now=T0, per_hold=5)
    assert isinstance(results[1], NodeNotFound)
    assert [NodeRow.objects.get(uid=n.id).space for n in (a, b, c)] == ["x", None, "x"]


def test_an_item_refused_at_its_save_leaves_no_audit_row(remember):
    """A file over the store's read limit (a hand edit) cannot be rewritten: its update fails at the save and must
    not record an update that never happened, while the other item of the same hold is written and audited."""
    a, b = (remember(t, now=T0) for t in TEXTS[3:5])
    path = runtime.store().path_for(a.id)
    before = path.read_bytes() + b"\n" + b"x" * (300 * 1024) + b"\n"
    path.write_bytes(before)
    results = nodes_update(patches=[(a.id, NodePatch(tier=Tier.ARCHIVAL)), (b.id, NodePatch(tier=Tier.ARCHIVAL))],
                           now=T0, per_hold=5)
    assert isinstance(results[0], PayloadTooLarge)
    assert path.read_bytes() == before
    assert not AuditRow.objects.filter(node_uid=a.id, operation="update").exists()
    assert AuditRow.objects.filter(node_uid=b.id, operation="update").count() == 1
    assert NodeRow.objects.get(uid=b.id).tier == Tier.ARCHIVAL


def test_nodes_update_looks_a_holds_rows_up_in_one_query(remember):
    """Each patched memory's row came from its own node_row_get (one ORM lookup each, 23 % of decay_manager's CPU
    in a profile of the soak's first cycle); a hold's whole ids are now read in one query, a prefix as before."""
    nodes = [remember(t, now=T0) for t in TEXTS[:5]]
    refs = [n.id for n in nodes[:4]] + [nodes[4].id[:8]]  # a prefix still resolves through node_row_get
    with CaptureQueriesContext(connection) as ctx:
        results = nodes_update(patches=[(ref, NodePatch(space="ops")) for ref in refs], now=T0, per_hold=5)
    assert [r.id for r in results] == [n.id for n in nodes]
    # the ORM's shape or memory.selectors.row_by_uid's plain statement ("... WHERE uid = %s")
    exact = [q["sql"] for q in ctx.captured_queries if re.search(r'(?:"memory_noderow"\."uid"|\buid) = ', q["sql"])]
    assert len(exact) == 1  # the prefix's exact-id try (node_row_get); the whole ids came with the hold's IN (...)
    assert [NodeRow.objects.get(uid=n.id).space for n in nodes] == ["ops"] * 5
