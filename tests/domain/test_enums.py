"""Enumerations and the constants tied to them."""

from __future__ import annotations

import pytest

from memory.domain.enums import (
    ACTIVATION_FACTORS,
    CORE_CAP,
    INITIAL_STABILITY,
    TIER_BOOST,
    TIER_ORDER,
    EdgeType,
    NodeType,
    Tier,
)


def test_node_types_are_the_ten_of_the_original():
    assert [t.value for t in NodeType] == [
        "fact", "decision", "preference", "event", "person", "project", "concept", "procedure", "goal", "observation",
    ]


def test_tiers_order_archival_below_working_below_core():
    assert sorted(Tier, key=TIER_ORDER.__getitem__) == [Tier.ARCHIVAL, Tier.WORKING, Tier.CORE]


@pytest.mark.parametrize(("edge", "factor"), [
    ("supports", 1.0), ("part_of", 1.0), ("depends_on", 1.0), ("defines", 1.0), ("derived_from", 1.0),
    ("evolved_from", 0.8), ("related_to", 0.7), ("contradicts", 0.4),
])
def test_activation_factor_per_edge_type(edge, factor):
    assert ACTIVATION_FACTORS[EdgeType(edge)] == factor


def test_every_edge_type_has_an_activation_factor():
    assert set(ACTIVATION_FACTORS) == set(EdgeType)


def test_tier_boosts():
    assert TIER_BOOST == {Tier.CORE: 0.10, Tier.WORKING: 0.0, Tier.ARCHIVAL: -0.10}


def test_core_cap_is_fifty():
    assert CORE_CAP == 50


def test_initial_stability_is_seven_days_to_thirty_percent():
    assert INITIAL_STABILITY == 5.814


def test_enum_members_compare_equal_to_their_strings():
    assert NodeType.DECISION == "decision"
    assert str(EdgeType.PART_OF) == "part_of"
