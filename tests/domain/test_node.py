"""Node and Connection values and the connection helpers."""

from __future__ import annotations

import copy
import pickle
from datetime import UTC, datetime, timedelta, timezone

import pytest

from memory.domain.enums import INITIAL_STABILITY, EdgeType, NodeType, Tier
from memory.domain.node import Connection, Node, new_node_id, utcnow, with_connection, without_connection

T0 = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
TARGET = "a1b2c3d4-0000-4000-8000-000000000001"


def make_node(**fields) -> Node:
    base = dict(
        id="3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f", type=NodeType.FACT, tier=Tier.WORKING, content="Lives in Dublin.",
        created=T0, updated=T0, last_accessed=T0,
    )
    base.update(fields)
    return Node(**base)


def test_defaults():
    node = make_node()
    assert (node.source, node.confidence, node.importance, node.access_count, node.stability) == (
        "agent:unknown", 1.0, 0.5, 0, INITIAL_STABILITY,
    )


def test_short_id_is_first_uuid_segment():
    assert make_node().short_id == "3f2a9c1e"


def test_new_node_id_is_a_uuid4_string():
    node_id = new_node_id()
    assert len(node_id) == 36
    assert node_id[14] == "4"


def test_utcnow_is_aware_utc():
    assert utcnow().utcoffset() == timedelta(0)


def test_naive_datetime_is_taken_as_utc():
    assert make_node(created=datetime(2026, 7, 1, 10, 0)).created == T0


def test_aware_datetime_is_converted_to_utc():
    node = make_node(updated=datetime(2026, 7, 1, 12, 0, tzinfo=timezone(timedelta(hours=2))))
    assert node.updated.tzinfo is UTC
    assert node.updated == T0


def test_string_enums_are_coerced():
    node = make_node(type="decision", tier="core")
    assert (node.type, node.tier) == (NodeType.DECISION, Tier.CORE)


def test_unknown_type_is_rejected():
    with pytest.raises(ValueError):
        make_node(type="thought")


def test_tags_list_becomes_tuple():
    assert make_node(tags=["a", "b"]).tags == ("a", "b")


def test_node_is_hashable_with_extra():
    node = make_node(extra={"plugin": {"labels": ["x"]}})
    assert hash(node) == hash(make_node(extra={"plugin": {"labels": ["y"]}}))


def test_extra_is_read_only():
    node = make_node(extra={"a": 1})
    with pytest.raises(TypeError):
        node.extra["a"] = 2  # type: ignore[index]


def test_extra_is_detached_from_the_callers_dict():
    given = {"plugin": {"labels": ["x"]}}
    node = make_node(extra=given)
    given["plugin"]["labels"].append("y")
    assert node.extra == {"plugin": {"labels": ["x"]}}


def test_extra_must_not_shadow_fields():
    with pytest.raises(ValueError, match="title"):
        make_node(extra={"title": "x"})


@pytest.mark.parametrize(("valid_until", "expected"), [
    (None, False),
    (T0 + timedelta(seconds=1), False),
    (T0, True),
    (T0 - timedelta(days=1), True),
])
def test_is_outdated(valid_until, expected):
    assert make_node(valid_until=valid_until).is_outdated(T0) is expected


def test_with_connection_appends():
    node = with_connection(make_node(), Connection(TARGET, EdgeType.SUPPORTS, 0.9))
    assert node.connections == (Connection(TARGET, EdgeType.SUPPORTS, 0.9),)


def test_with_connection_replaces_same_target_and_edge_in_place():
    other = Connection("b" * 8 + "-0000-4000-8000-000000000002")
    node = make_node(connections=(Connection(TARGET, weight=0.2), other))
    updated = with_connection(node, Connection(TARGET, weight=0.8, reason="closer"))
    assert updated.connections == (Connection(TARGET, weight=0.8, reason="closer"), other)


def test_with_connection_keeps_other_edge_types_to_same_target():
    node = make_node(connections=(Connection(TARGET, EdgeType.SUPPORTS),))
    updated = with_connection(node, Connection(TARGET, EdgeType.CONTRADICTS, 0.9))
    assert [c.edge for c in updated.connections] == [EdgeType.SUPPORTS, EdgeType.CONTRADICTS]


def test_with_connection_returns_same_object_when_already_present():
    node = make_node(connections=(Connection(TARGET),))
    assert with_connection(node, Connection(TARGET)) is node


def test_without_connection_removes_all_edges_to_target():
    node = make_node(connections=(Connection(TARGET, EdgeType.SUPPORTS), Connection(TARGET)))
    assert without_connection(node, TARGET).connections == ()


def test_without_connection_of_one_edge_type():
    node = make_node(connections=(Connection(TARGET, EdgeType.SUPPORTS), Connection(TARGET)))
    assert without_connection(node, TARGET, EdgeType.SUPPORTS).connections == (Connection(TARGET),)


def test_without_connection_returns_same_object_when_nothing_matches():
    node = make_node(connections=(Connection(TARGET),))
    assert without_connection(node, "nope") is node


def test_node_survives_pickle():
    node = make_node(tags=("a",), extra={"plugin": {"labels": ["x"]}}, connections=(Connection(TARGET),))
    assert pickle.loads(pickle.dumps(node)) == node


def test_node_survives_deepcopy():
    node = make_node(extra={"plugin": {"labels": ["x"]}})
    assert copy.deepcopy(node) == node
