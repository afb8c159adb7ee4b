"""The trust keys in node files: golden file, lossless round trip, strict parsing, and the rebuild invariant."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory import runtime
from memory.domain.markdown import parse, render
from memory.domain.node import Connection, Provenance
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.errors import MalformedNodeFile
from memory.models import EdgeRow, NodeCitationRow, NodeRow
from memory.rebuild import rebuild
from memory.services import core_block_set, node_remember, relation_create
from memory.domain.requests import NodeCreate
from tests.domain.test_markdown_properties import nodes
from tests.trust.conftest import NOW

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "trust_fields.md"


def test_the_golden_trust_file_parses_to_its_fields():
    node = parse(GOLDEN.read_text())
    assert (node.source_event_ids, node.pinned, node.authority, node.read_only) == (
        ("ev_20260701_00aa11bb22cc33dd", "ev_20260701_44ee55ff66778899"), True, 80, True)
    assert node.provenance == Provenance(
        workspace_path="/home/dana/shop", git_branch="main", git_commit="4b825dc642cb6eb9a060e54bf8d69288fbee4904",
        file_path="src/app.py", content_sha256="9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08")
    first = node.connections[0]
    assert (first.edge, first.valid_from, first.source_event_ids) == (
        "evolved_from", datetime(2026, 6, 1, tzinfo=UTC), ("ev_20260601_0123456789abcdef",))
    assert dict(node.extra) == {}


@pytest.mark.parametrize(("line", "reason"), [
    ("read_only: 'yes'", "'read_only' must be true or false"),
    ("authority: -1", "'authority' must be a whole number >= 0"),
    ("source_event_ids: {a: 1}", "'source_event_ids' must be a list"),
])
def test_a_bad_trust_value_makes_the_file_malformed(line, reason):
    text = f"---\nid: 5b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9\ntype: fact\ncreated: '2026-07-01'\n{line}\n---\n\nx\n"
    with pytest.raises(MalformedNodeFile, match=reason):
        parse(text)


trust_nodes = st.builds(
    lambda node, ids, prov, flags, windows: replace(
        node, source_event_ids=ids, provenance=prov, pinned=flags[0], read_only=flags[1], authority=flags[2],
        connections=tuple(replace(c, valid_from=w[0], valid_until=w[1], source_event_ids=w[2])
                          for c, w in zip(node.connections, windows))),
    nodes,
    st.lists(st.text(min_size=1), max_size=3).map(tuple),
    st.builds(Provenance, *(st.none() | st.text(min_size=1) for _ in range(5))),
    st.tuples(st.booleans(), st.booleans(), st.integers(min_value=0, max_value=10**6)),
    st.lists(st.tuples(st.none() | st.datetimes(timezones=st.just(UTC)), st.none() | st.datetimes(timezones=st.just(UTC)),
                       st.lists(st.text(min_size=1), max_size=2).map(tuple)), min_size=4, max_size=4),
)


@settings(max_examples=100, database=None, deadline=None)
@given(trust_nodes)
def test_trust_fields_round_trip(node):
    assert parse(render(node)) == node


def test_a_connection_is_active_inside_its_window():
    conn = Connection(target="x", edge="evolved_from", valid_until=datetime(2027, 1, 1, tzinfo=UTC))
    assert (conn.is_active(datetime(2026, 12, 31, tzinfo=UTC)), conn.is_active(datetime(2027, 1, 1, tzinfo=UTC))) == (
        True, False)


def _snapshot() -> dict:
    uid_of = dict(NodeRow.objects.values_list("id", "uid"))
    return {
        "nodes": {r["uid"]: r for r in NodeRow.objects.values("uid", "pinned", "authority", "read_only", "trust_json",
                                                               "connections_json")},
        "edges": sorted((uid_of[s], uid_of[t], e, a, b) for s, t, e, a, b in EdgeRow.objects.values_list(
            "source_id", "target_id", "edge_type", "valid_from", "valid_until")),
        "citations": sorted((uid_of[n], e) for n, e in NodeCitationRow.objects.values_list("node_id", "event_id")),
    }


def test_rebuild_from_files_equals_the_live_trust_rows(mem, repo):
    old = node_remember(request=NodeCreate(content="The shop API listens on port 8080", workspace_path=str(repo.root),
                                           git_branch="main", file_path="src/app.py"), session_id="s1",
                        auto_link=False).node
    new = mem("The shop API listens on port 9090", auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES,
                                       valid_from=NOW, valid_until=NOW + timedelta(days=365)))
    core_block_set(ref=new.id, pinned=True, authority=7, read_only=True)
    live = _snapshot()
    assert rebuild(runtime.store(), embedder=runtime.embedder(), verify=True).embedded == 0  # rows rewritten
    assert _snapshot() == live
    assert live["edges"][0][2:] == ("evolved_from", NOW, NOW + timedelta(days=365))
    assert [e for _, e in live["citations"]] == list(old.source_event_ids)  # the explicit_memory event
    assert '"source_event_ids": ["ev_' in live["nodes"][new.id]["connections_json"]  # the relation's audit event
