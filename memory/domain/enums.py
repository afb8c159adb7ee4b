"""Node types, tiers, edge types and the constants attached to them."""

from __future__ import annotations

import math
from enum import StrEnum


class NodeType(StrEnum):
    """What kind of memory a node is."""

    FACT = "fact"
    DECISION = "decision"
    PREFERENCE = "preference"
    EVENT = "event"
    PERSON = "person"
    PROJECT = "project"
    CONCEPT = "concept"
    PROCEDURE = "procedure"
    GOAL = "goal"
    OBSERVATION = "observation"


class Tier(StrEnum):
    """Priority level: core is always relevant, archival is deep storage."""

    CORE = "core"
    WORKING = "working"
    ARCHIVAL = "archival"


class EdgeType(StrEnum):
    """The relation a connection expresses."""

    SUPPORTS = "supports"
    PART_OF = "part_of"
    DEPENDS_ON = "depends_on"
    DEFINES = "defines"
    DERIVED_FROM = "derived_from"
    EVOLVED_FROM = "evolved_from"
    RELATED_TO = "related_to"
    CONTRADICTS = "contradicts"
    EXTENDS = "extends"


# Temporal-relation names that are the same relation as an existing edge type (docs/trust.md): a file or a
# request may say `supersedes` or `derives`, and it is stored as the one edge type that already means it.
EDGE_ALIASES: dict[str, EdgeType] = {
    "supersedes": EdgeType.EVOLVED_FROM,
    "derives": EdgeType.DERIVED_FROM,
}


def edge_type_of(value: str) -> EdgeType:
    """The edge type a name means, aliases included; raises ValueError for an unknown name."""
    return EDGE_ALIASES.get(value) or EdgeType(value)


TIER_ORDER: dict[Tier, int] = {Tier.ARCHIVAL: 0, Tier.WORKING: 1, Tier.CORE: 2}

ACTIVATION_FACTORS: dict[EdgeType, float] = {
    EdgeType.SUPPORTS: 1.0,
    EdgeType.PART_OF: 1.0,
    EdgeType.DEPENDS_ON: 1.0,
    EdgeType.DEFINES: 1.0,
    EdgeType.DERIVED_FROM: 1.0,
    EdgeType.EVOLVED_FROM: 0.8,
    EdgeType.RELATED_TO: 0.7,
    EdgeType.CONTRADICTS: 0.4,
    EdgeType.EXTENDS: 0.9,
}

TIER_BOOST: dict[Tier, float] = {Tier.CORE: 0.10, Tier.WORKING: 0.0, Tier.ARCHIVAL: -0.10}

CORE_CAP = 50

# Days until retrievability exp(-t/S) falls to 0.3 after one week: S = -7 / ln(0.3).
INITIAL_STABILITY = round(-7 / math.log(0.3), 3)
