"""A fresh memory is written once: remember (single, batch, about the user) and a note import give it the
importance the formula gives it, so the first sleep cycle leaves its file alone (issue 13 item 7); so does
self_ensure for the self node.

Real store, real MiniLM, the real jobs (sleep_cycle_run, no LLM). On the old code every fresh file held 0.5 and
importance_scorer rewrote each one (the formula gives a new memory 0.33-0.5).
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta

from maintenance.runner import job_execute, sleep_cycle_run
from memory import runtime
from memory.domain.lifecycle import creation_degrees, importance
from memory.domain.node import Connection, Node
from memory.domain.requests import ConnectionIn, NodeCreate
from memory.models import NodeRow
from memory.services import node_create, nodes_remember, self_ensure
from memory.services.importing import notes_import
from memory.services.nodes import nodes_create

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)

OLDER = [
    ("The billing service runs on port 8080 behind nginx", "billing"),
    ("Billing invoices are generated nightly by a cron job at 02:00", "billing"),
    ("Grafana dashboards show the billing service latency and error rate", "billing"),
    ("The team deploys on Thursdays after the standup", None),
]


def files_of(uids: list[str]) -> dict[str, tuple[bytes, int]]:
    store = runtime.store()
    return {uid: (store.path_for(uid).read_bytes(), os.stat(store.path_for(uid)).st_mtime_ns) for uid in uids}


def degree(uid: str) -> int:
    row = NodeRow.objects.get(uid=uid)
    return row.out_edges.count() + row.in_edges.count()


def test_the_first_cycle_leaves_fresh_memories_files_alone(no_llm, db, tmp_path):
    self_ensure(name="Robin", now=T0 - timedelta(days=3))
    for content, space in OLDER:
        node_create(request=NodeCreate(content=content, space=space), now=T0 - timedelta(days=3))
    calls = [[node_create(request=NodeCreate(content="The billing service listens on port 8080 behind nginx proxy",
                                             space="billing"), now=T0).node]]
    calls.append([node_create(request=NodeCreate(content="Robin prefers tea to coffee", about_self=True),
                              now=T0).node])
    calls.append([r.node for r in nodes_create(requests=[
        NodeCreate(content="Billing invoices are generated every night by a cron job", space="billing"),
        NodeCreate(content="The payments queue is RabbitMQ on the billing cluster", space="billing",
                   connections=[ConnectionIn(target=calls[0][0].id, edge="related_to", weight=0.4)]),
        NodeCreate(content="Robin lives in Lisbon", about_self=True),
    ], now=T0)])
    calls.append([r.node for r in nodes_remember(items=[
        (NodeCreate(content="Grafana dashboards display billing service latency and errors", space="billing"), "s1"),
        (NodeCreate(content="The nightly invoice cron logs to /var/log/billing", space="billing"), "s1"),
    ], now=T0)])
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "runbook.md").write_text("# Restart runbook\n\nRestart billing with systemctl, see [[oncall]].\n")
    (notes / "oncall.md").write_text("# Oncall\n\nThe oncall rota is kept in the wiki.\n")
    fresh = [n.id for call in calls for n in call] + notes_import(folder=notes, space="billing").imported
    assert len(fresh) == 9
    # auto-links to the older memories and to earlier fresh ones, the batch's connection to the first memory, the
    # self node's `defines` (1, 4), the link between the two notes
    assert [degree(u) for u in fresh] == [2, 1, 2, 1, 1, 1, 2, 1, 1]
    # what a later call linked to: its degree moved after its file was written, so the cycle rewrites it
    earlier: set[str] = set()
    linked_later: set[str] = set()
    for call in calls:
        linked_later |= {c.target for n in call for c in n.connections if c.target in earlier}
        earlier |= {n.id for n in call}
    assert len(linked_later) == 2
    before = files_of(fresh)

    outcomes = {o.job: o for o in sleep_cycle_run(now=T0 + timedelta(hours=1))}

    assert all(o.status == "ok" for o in outcomes.values()), {j: o.status for j, o in outcomes.items()}
    after = files_of(fresh)
    assert {u for u in fresh if after[u] != before[u]} == linked_later
    for uid in linked_later:
        value = importance(access_count=0, degree=degree(uid), last_accessed=T0, now=T0 + timedelta(hours=1))
        assert after[uid][0] == re.sub(rb"importance: [0-9.]+", f"importance: {value}".encode(), before[uid][0])
    # the scorer wrote the older memories (their recency moved in 3 days), the self node and those two
    assert outcomes["importance_scorer"].counts["written"] == len(OLDER) + 1 + len(linked_later)


def test_the_creation_importance_is_the_formula_with_the_indexed_degree(no_llm, db):
    self_ensure(name="Robin", now=T0)
    a = node_create(request=NodeCreate(content="The billing service runs on port 8080"), now=T0,
                    auto_link=False).node
    results = nodes_create(requests=[
        NodeCreate(content="Billing runs on two hosts", connections=[ConnectionIn(target=a.id, edge="part_of")]),
        NodeCreate(content="Robin owns the billing service", about_self=True,
                   connections=[ConnectionIn(target=a.id, edge="related_to"),
                            ConnectionIn(target=a.id, edge="depends_on")]),
    ], now=T0, auto_link=False)
    b, c = (r.node for r in results)
    # b: one edge out; c: two out (two types to the same target) and the self node's `defines` in
    assert [degree(n.id) for n in (a, b, c)] == [0 + 3, 1, 3]
    assert (b.importance, c.importance) == (
        importance(access_count=0, degree=1, last_accessed=T0, now=T0),  # 0.33 + 0.33 ln2/ln21 = 0.4051
        importance(access_count=0, degree=3, last_accessed=T0, now=T0))
    assert (b.importance, c.importance, a.importance) == (0.4051, 0.4803, 0.33)
    assert NodeRow.objects.get(uid=c.id).importance == 0.4803


def test_creation_degrees_count_the_batchs_links_both_ways():
    def node(uid: str, *targets: tuple[str, str]) -> Node:
        return Node(id=uid, type="fact", tier="working", content=uid, created=T0, updated=T0, last_accessed=T0,
                    connections=tuple(Connection(target=t, edge=e) for t, e in targets))

    nodes = [node("a"), node("b", ("a", "related_to"), ("x", "related_to")),
             node("c", ("a", "related_to"), ("a", "supports"), ("b", "related_to"))]
    assert creation_degrees(nodes, {"c"}) == {"a": 3, "b": 3, "c": 4}


def test_a_skipped_notes_links_do_not_count_in_the_degree_of_the_note_it_links_to(no_llm, db, tmp_path):
    # Another memory keeps the folder from being emptied whole: on PostgreSQL the write unit's pull refills a
    # folder without any memory file from the documents store (a new host's cache), which would bring plan.md's
    # file back before the import reads it. One file removed by hand is missing on both engines.
    node_create(request=NodeCreate(content="The team deploys on Thursdays"), now=T0, auto_link=False)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe migration plan is in the wiki.\n")
    first = notes_import(folder=notes).imported
    plan_file = runtime.store().path_for(first[0])
    kept = plan_file.read_bytes()
    plan_file.unlink()  # its memory's file went missing on disk: re-importing the edited note fails (404), skipped
    (notes / "plan.md").write_text("# Plan\n\nThe migration plan follows [[runbook]].\n")
    (notes / "runbook.md").write_text("# Runbook\n\nRestart billing with systemctl.\n")

    report = notes_import(folder=notes)

    assert [p.rsplit("/", 1)[-1] for p, _ in report.skipped] == ["plan.md"] and len(report.imported) == 1
    plan_file.write_bytes(kept)  # back as it was: it never linked to the runbook
    runbook = report.imported[0]
    assert degree(runbook) == 0
    # the runbook holds the formula at degree 0 (on the old code 0.4051, degree 1 with the skipped note's link)
    assert NodeRow.objects.get(uid=runbook).importance == 0.33
    before = files_of([runbook])
    outcome = job_execute("importance_scorer", now=datetime.now(UTC) + timedelta(hours=1))
    assert outcome.status == "ok"
    assert files_of([runbook]) == before  # the next cycle finds nothing to rewrite in it


def test_the_self_node_is_written_with_the_creation_importance(no_llm, db):
    me = self_ensure(name="Robin", now=T0)
    # no access and no edges yet: 0.33 (on the old code 0.5, which the next importance_scorer run rewrote)
    assert me.importance == importance(access_count=0, degree=0, last_accessed=T0, now=T0) == 0.33
    assert "importance: 0.33\n" in runtime.store().path_for(me.id).read_text()
    assert NodeRow.objects.get(uid=me.id).importance == 0.33
    before = files_of([me.id])
    outcome = job_execute("importance_scorer", now=T0 + timedelta(hours=1))
    assert (outcome.status, outcome.counts) == ("ok", {"changed": 0})
    assert files_of([me.id]) == before
