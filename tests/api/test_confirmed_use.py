"""node_confirm_use: bounded growth, a one-day cooldown, archival -> working, written through the file."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory import runtime
from memory.domain.requests import NodeCreate
from memory.errors import NodeNotFound
from memory.models import AuditRow, NodeRow
from memory.selectors import node_get
from memory.services import node_confirm_use, node_create

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def node(home, db):
    return node_create(request=NodeCreate(content="The staging database is reset every Sunday"), now=T0,
                       auto_link=False).node


def _stored(node_id):
    return node_get(store=runtime.store(), ref=node_id)


@pytest.mark.parametrize("days,stability", [(10, 7.51), (30, 8.23)])
def test_use_grows_stability_boundedly(node, days, stability):
    used = node_confirm_use(ref=node.id, now=T0 + timedelta(days=days))
    assert (used.stability, used.access_count, used.last_review, used.last_accessed) == (
        stability, 1, T0 + timedelta(days=days), T0 + timedelta(days=days))
    assert _stored(node.id) == used


def test_a_second_use_within_a_day_only_counts_access(node):
    first = node_confirm_use(ref=node.id, now=T0 + timedelta(days=10))
    second = node_confirm_use(ref=node.id[:8], now=T0 + timedelta(days=10, hours=20))
    assert (second.stability, second.last_review, second.access_count) == (first.stability, first.last_review, 2)
    assert second.last_accessed == T0 + timedelta(days=10, hours=20)


def test_use_after_the_cooldown_grows_again(node):
    first = node_confirm_use(ref=node.id, now=T0 + timedelta(days=10))
    again = node_confirm_use(ref=node.id, now=T0 + timedelta(days=11))
    assert again.stability > first.stability


def test_use_does_not_advance_updated(node):
    assert node_confirm_use(ref=node.id, now=T0 + timedelta(days=3)).updated == T0


def test_use_updates_the_index_row(node):
    node_confirm_use(ref=node.id, now=T0 + timedelta(days=10))
    row = NodeRow.objects.get(uid=node.id)
    assert (row.access_count, row.stability, row.last_review) == (1, 7.51, T0 + timedelta(days=10))


def test_use_promotes_archival_to_working_with_an_audit_row(home, db):
    old = node_create(request=NodeCreate(content="An archived detail", tier="archival"), now=T0,
                      auto_link=False).node
    now = T0 + timedelta(days=90)
    used = node_confirm_use(ref=old.id, now=now, source="feedback")
    assert (used.tier, used.updated) == ("working", now)
    assert used.stability >= 5.814
    audit = AuditRow.objects.get(node_uid=old.id)
    assert (audit.operation, audit.detail) == ("promote", {"from": "archival", "to": "working",
                                                          "reason": "confirmed use (feedback)"})
    assert NodeRow.objects.get(uid=old.id).tier == "working"


def test_use_of_an_unknown_memory_raises(home, db):
    with pytest.raises(NodeNotFound):
        node_confirm_use(ref="ffffffff")
