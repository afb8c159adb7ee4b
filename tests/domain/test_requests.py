"""Create/patch request validation and the pure builders."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from memory.domain.enums import INITIAL_STABILITY, EdgeType, NodeType, Tier
from memory.domain.node import Connection
from memory.domain.requests import (
    ConnectionIn,
    NodeCreate,
    NodePatch,
    apply_patch,
    auto_title,
    build_node,
    is_too_large,
    validation_message,
)
from tests.domain.test_node import T0, TARGET, make_node

NODE_ID = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
LATER = T0 + timedelta(hours=1)


def error_of(**fields) -> str:
    with pytest.raises(ValidationError) as info:
        NodeCreate(**fields)
    return validation_message(info.value)


# ---------------------------------------------------------------------------
# NodeCreate validation
# ---------------------------------------------------------------------------

def test_defaults():
    req = NodeCreate(content="Lives in Dublin.")
    assert (req.type, req.tier, req.source, req.space, req.tags, req.confidence) == (
        NodeType.FACT, Tier.WORKING, "agent:unknown", None, [], 1.0,
    )


@pytest.mark.parametrize("content", ["  \n Lives in Dublin.\n\n ", "a\rb\r", "tab\t"])
def test_content_is_kept_verbatim(content):
    assert NodeCreate(content=content).content == content


@pytest.mark.parametrize("field", [{"about_self": "yes"}, {"pinned": 1}, {"read_only": "true"},
                                   {"created": 1700000000}, {"created": "0001-01-01T00:00:00Z"},
                                   {"created": "9999-12-31T00:00:00Z"}, {"source": "system:self"},
                                   {"source": "System:import"}, {"tags": ["self"]}])
def test_loose_or_reserved_values_are_refused(field):
    with pytest.raises(ValidationError):
        NodeCreate(content="x", **field)


def test_patching_the_self_nodes_tags_keeps_its_self_tags():
    from memory.domain.identity import build_self_node, is_self_node

    me = build_self_node(name="Robin", node_id="3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f", now=T0)
    assert is_self_node(apply_patch(me, NodePatch(tags=["likes-tea"]), now=T0))


@pytest.mark.parametrize("content", ["", "   ", "\n\t\n"])
def test_blank_content_is_rejected(content):
    assert error_of(content=content) == "content: must not be blank"


def test_nul_byte_is_rejected():
    assert error_of(content="a\x00b") == "content: must not contain NUL bytes"


def test_content_at_the_limit_is_accepted():
    assert len(NodeCreate(content="a" * 65536).content) == 65536


def test_oversized_content_names_the_limit():
    assert error_of(content="a" * 65537) == "content: must be at most 65536 bytes of UTF-8 (got 65537)"


def test_oversized_content_is_flagged_too_large():
    with pytest.raises(ValidationError) as info:
        NodeCreate(content="é" * 32769)
    assert is_too_large(info.value) is True


def test_blank_content_is_not_flagged_too_large():
    with pytest.raises(ValidationError) as info:
        NodeCreate(content=" ")
    assert is_too_large(info.value) is False


def test_lone_surrogate_is_rejected():
    assert error_of(content="a\ud800") == "content: must be valid UTF-8 text"


def test_fifty_tags_are_accepted():
    assert len(NodeCreate(content="x", tags=[f"t{i}" for i in range(50)]).tags) == 50


def test_fifty_one_tags_are_rejected():
    assert error_of(content="x", tags=[f"t{i}" for i in range(51)]) == "tags: at most 50 tags"


def test_tags_are_normalised():
    req = NodeCreate(content="x", tags=["  SQLite ", "Machine  Learning", "about_self", "", "sqlite", "v1.2:rc"])
    assert req.tags == ["sqlite", "machine-learning", "about_self", "v1.2:rc"]


@pytest.mark.parametrize(("tag", "message"), [
    ("#hash", "tags: tag '#hash' must be lowercase letters, digits and _ - . :"),
    ("-dash", "tags: tag '-dash' must be lowercase letters, digits and _ - . :"),
    ("x" * 65, f"tags: tag '{'x' * 65}' is longer than 64 characters"),
])
def test_bad_tags_are_rejected(tag, message):
    assert error_of(content="x", tags=[tag]) == message


def test_unknown_type_is_rejected():
    assert error_of(content="x", type="thought").startswith("type: Input should be 'fact', 'decision'")


def test_confidence_above_one_is_rejected():
    assert error_of(content="x", confidence=1.5) == "confidence: Input should be less than or equal to 1"


def test_negative_weight_is_rejected():
    message = error_of(content="x", connections=[{"target": TARGET, "weight": -0.1}])
    assert message == "connections.0.weight: Input should be greater than or equal to 0"


def test_unknown_field_is_rejected():
    assert error_of(content="x", colour="red") == "colour: Extra inputs are not permitted"


@pytest.mark.parametrize("space", [None, "", "   ", "null", "None", "NULL", " none "])
def test_space_placeholders_mean_global(space):
    assert NodeCreate(content="x", space=space).space is None


def test_space_is_stripped():
    assert NodeCreate(content="x", space="  ormah ").space == "ormah"


@pytest.mark.parametrize("space", ["a/b", "a\\b", "a\nb"])
def test_space_with_slash_or_control_is_rejected(space):
    assert error_of(content="x", space=space) == "space: must not contain slashes or control characters"


def test_title_over_300_characters_is_rejected():
    assert error_of(content="x", title="t" * 301) == "title: must be at most 300 characters"


def test_blank_title_becomes_none():
    assert NodeCreate(content="x", title="   ").title is None


def test_blank_source_becomes_default():
    assert NodeCreate(content="x", source=" ").source == "agent:unknown"


def test_naive_created_is_utc():
    assert NodeCreate(content="x", created=datetime(2026, 7, 1, 10, 0)).created == T0


def test_aware_created_is_converted_to_utc():
    created = NodeCreate(content="x", created="2026-07-01T12:00:00+02:00").created
    assert (created, created.tzinfo) == (T0, UTC)


def test_connection_defaults():
    assert ConnectionIn(target=TARGET) == ConnectionIn(target=TARGET, edge=EdgeType.RELATED_TO, weight=0.5, reason=None)


def test_connection_target_is_stripped_and_blank_reason_dropped():
    assert ConnectionIn(target=" 3f2a9c1e ", reason="  ") == ConnectionIn(target="3f2a9c1e")


def test_blank_connection_target_is_rejected():
    with pytest.raises(ValidationError) as info:
        ConnectionIn(target="   ")
    assert validation_message(info.value) == "target: must not be blank"


def test_connection_reason_over_1000_characters_is_rejected():
    with pytest.raises(ValidationError):
        ConnectionIn(target=TARGET, reason="r" * 1001)


def test_validation_message_joins_errors():
    assert error_of(content=" ", confidence=2) == (
        "content: must not be blank; confidence: Input should be less than or equal to 1"
    )


# ---------------------------------------------------------------------------
# NodePatch
# ---------------------------------------------------------------------------

def test_patch_changes_lists_only_given_fields():
    assert NodePatch(title=None, tier="core").changes() == {"tier": Tier.CORE, "title": None}


@pytest.mark.parametrize("field", ["content", "type", "tier", "tags", "confidence", "space_locked", "add_connections"])
def test_patch_rejects_null_for_required_fields(field):
    with pytest.raises(ValidationError) as info:
        NodePatch(**{field: None})
    assert validation_message(info.value) == f"{field}: must not be null"


def test_patch_validates_like_create():
    with pytest.raises(ValidationError) as info:
        NodePatch(content="  ")
    assert validation_message(info.value) == "content: must not be blank"


def test_patch_naive_valid_until_is_utc():
    assert NodePatch(valid_until=datetime(2026, 7, 1, 10, 0)).valid_until == T0


# ---------------------------------------------------------------------------
# build_node
# ---------------------------------------------------------------------------

def test_build_node_sets_timestamps_and_stability():
    node = build_node(NodeCreate(content="Lives in Dublin."), node_id=NODE_ID, now=T0)
    assert (node.created, node.updated, node.last_accessed, node.stability) == (T0, T0, T0, INITIAL_STABILITY)


def test_build_node_keeps_imported_created():
    node = build_node(NodeCreate(content="x", created=T0), node_id=NODE_ID, now=LATER)
    assert (node.created, node.updated) == (T0, LATER)


def test_build_node_converts_now_to_utc():
    node = build_node(NodeCreate(content="x"), node_id=NODE_ID, now=LATER.astimezone(timezone(timedelta(hours=-5))))
    assert node.updated.tzinfo is UTC


def test_build_node_copies_connections():
    req = NodeCreate(content="x", connections=[{"target": TARGET, "edge": "supports", "weight": 0.9, "reason": "r"}])
    node = build_node(req, node_id=NODE_ID, now=T0)
    assert node.connections == (Connection(TARGET, EdgeType.SUPPORTS, 0.9, "r"),)


def test_about_self_adds_tag_once():
    node = build_node(NodeCreate(content="x", tags=["about_self", "home"], about_self=True), node_id=NODE_ID, now=T0)
    assert node.tags == ("about_self", "home")


def test_about_self_appends_tag():
    node = build_node(NodeCreate(content="x", tags=["home"], about_self=True), node_id=NODE_ID, now=T0)
    assert node.tags == ("home", "about_self")


def test_person_about_self_goes_to_core():
    node = build_node(NodeCreate(content="x", type="person", about_self=True), node_id=NODE_ID, now=T0)
    assert node.tier == Tier.CORE


def test_fact_about_self_keeps_requested_tier():
    node = build_node(NodeCreate(content="x", about_self=True), node_id=NODE_ID, now=T0)
    assert node.tier == Tier.WORKING


# ---------------------------------------------------------------------------
# apply_patch
# ---------------------------------------------------------------------------

def test_noop_patch_returns_the_same_object():
    node = make_node(title="Home", tags=("a",))
    assert apply_patch(node, NodePatch(title="Home", tags=["a"], content=node.content), now=LATER) is node


def test_empty_patch_returns_the_same_object():
    node = make_node()
    assert apply_patch(node, NodePatch(), now=LATER) is node


def test_readding_an_existing_connection_is_a_noop():
    node = make_node(connections=(Connection(TARGET),))
    assert apply_patch(node, NodePatch(add_connections=[{"target": TARGET}]), now=LATER) is node


def test_real_change_bumps_updated():
    patched = apply_patch(make_node(), NodePatch(title="Home"), now=LATER)
    assert (patched.title, patched.updated, patched.created) == ("Home", LATER, T0)


def test_patch_clears_title_with_null():
    assert apply_patch(make_node(title="Home"), NodePatch(title=None), now=LATER).title is None


def test_patch_replaces_tags():
    assert apply_patch(make_node(tags=("a", "b")), NodePatch(tags=["C"]), now=LATER).tags == ("c",)


def test_patch_adds_connections():
    patched = apply_patch(make_node(), NodePatch(add_connections=[{"target": TARGET, "weight": 0.3}]), now=LATER)
    assert patched.connections == (Connection(TARGET, weight=0.3),)


# ---------------------------------------------------------------------------
# auto_title
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(("content", "expected"), [
    ("Short first line\nsecond line", "Short first line"),
    ("  \n  Padded line  \n", "Padded line"),
    ("", ""),
    ("x" * 60, "x" * 60),
    ("word " * 20, "word word word word word word word word word word word word…"),
    ("y" * 70, "y" * 60 + "…"),
    ("a" * 59 + " " + "b" * 10, "a" * 59 + "…"),
    ("a" * 60 + " bbb", "a" * 60 + "…"),
])
def test_auto_title(content, expected):
    assert auto_title(content) == expected
