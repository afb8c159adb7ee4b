"""Agent-ready text of recall hits (reference §1.8)."""

from __future__ import annotations

from datetime import UTC, datetime

from memory.domain.search import SearchHit
from memory.search import format_hits_text

CREATED = datetime(2026, 11, 19, 15, 10, 5, tzinfo=UTC)


def hit(n: int, **fields) -> SearchHit:
    base = dict(
        node_id=f"{n:08d}-0000-4000-8000-000000000000", row_id=n, short_id=f"{n:08d}", title=f"Memory {n}",
        content="Short content.", type="fact", tier="working", space=None, tags=(), created=CREATED,
        updated=CREATED, valid_until=None, confidence=1.0, score=0.8125, source="hybrid",
    )
    base.update(fields)
    return SearchHit(**base)


def test_no_hits():
    assert format_hits_text([]) == "No good match for this query."


def test_direct_related_and_conflicting_sections():
    text = format_hits_text([
        hit(1, type="decision", title="Per-tenant invoice numbers", content="x" * 250),
        hit(2, source="activated", activated_by="00000001-0000-4000-8000-000000000000", activation_edge="depends_on",
            score=0.3),
        hit(3, source="conflict", activated_by="00000001-0000-4000-8000-000000000000", activation_edge="contradicts",
            score=0.1, valid_until=datetime(2026, 1, 1, tzinfo=UTC)),
    ])
    assert text == (
        "Found 1 memory (+2 related):\n"
        "\n"
        "1. [decision] Per-tenant invoice numbers\n"
        "   ID: 00000001-0000-4000-8000-000000000000 | Tier: working | Score: 0.812 | Created: 2026-11-19T15:10:05\n"
        f"   {'x' * 200}...\n"
        "\n"
        "--- Related (via graph) ---\n"
        "\n"
        "2. [fact] Memory 2\n"
        "   ID: 00000002-0000-4000-8000-000000000000 | Tier: working | Score: 0.300 | Created: 2026-11-19T15:10:05\n"
        "   via depends_on from 00000001...\n"
        "   Short content.\n"
        "\n"
        "--- Conflicting context ---\n"
        "\n"
        "3. [fact] Memory 3\n"
        "   ID: 00000003-0000-4000-8000-000000000000 | Tier: working | Score: 0.100 | Created: 2026-11-19T15:10:05"
        " | Outdated since: 2026-01-01T00:00:00\n"
        "   contradicts 00000001...\n"
        "   Short content.\n"
    )


def test_only_direct_hits_have_a_plain_header():
    assert format_hits_text([hit(1), hit(2, source="temporal")]).startswith("Found 2 memories:\n\n1. [fact] Memory 1\n")
