"""A full core for the core cap's tests (at remember and promotion: tests/memory/test_core_cap.py; on import:
tests/portability/test_import_core_cap.py): real writes through node_create, real files and index."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory.domain.requests import ConnectionIn, NodeCreate
from memory.models import NodeRow
from memory.services import node_create

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)


def tiers(*uids: str) -> list[str]:
    return [NodeRow.objects.get(uid=u).tier for u in uids]


def full_core(cap: int) -> list[str]:
    """`cap` core memories, each with one edge (importance 0.4051), over a working memory they all point to."""
    hub = node_create(request=NodeCreate(content="The billing service runs on port 8080"), now=T0,
                      auto_link=False).node
    return [node_create(request=NodeCreate(content=f"Core rule {i}: billing deploys need a review", tier="core",
                                           connections=[ConnectionIn(target=hub.id, edge="related_to")]),
                        now=T0 + timedelta(minutes=i), auto_link=False).node.id for i in range(cap)]
