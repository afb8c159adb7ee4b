"""The self node: who it is, how it is built, and the identity rules of remember()."""

from __future__ import annotations

from datetime import datetime

from memory.domain.enums import NodeType, Tier
from memory.domain.node import Node

SELF_SOURCE = "system:self"
SELF_TAGS = ("self", "identity")
ABOUT_SELF_TAG = "about_self"


def is_self_node(node: Node) -> bool:
    """The self node is the person node written by the system with the `self` tag."""
    return node.source == SELF_SOURCE and "self" in node.tags


def build_self_node(*, name: str, node_id: str, now: datetime) -> Node:
    """A new self node (person, core, global)."""
    return Node(
        id=node_id, type=NodeType.PERSON, tier=Tier.CORE, title=name or "Self",
        content=f"{name or 'The user'}: the person these memories belong to.",
        created=now, updated=now, last_accessed=now, source=SELF_SOURCE, tags=SELF_TAGS,
    )
