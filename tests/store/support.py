"""Shared helpers of the markdown store's tests: ids, times, a node builder, a folder listing."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from memory.domain.enums import NodeType
from memory.domain.node import Node

T0 = datetime(2026, 7, 1, 10, 0, tzinfo=UTC)
T1 = datetime(2026, 7, 2, 9, 30, tzinfo=UTC)
ID_A = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"
ID_B = "3f2a9c1e-0000-4000-8000-000000000002"
MALFORMED = b"---\nid: [unclosed\n---\n\nhand-edited\n"


def make_node(node_id: str = ID_A, **fields) -> Node:
    base = dict(
        id=node_id, type=NodeType.DECISION, tier="working", content="SQLite is the derived index.",
        title="Chose SQLite over Postgres", created=T0, updated=T0, last_accessed=T0,
    )
    base.update(fields)
    return Node(**base)


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))
