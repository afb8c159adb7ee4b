"""Audit ledger writes: a snapshot of a node before an operation changes or removes it, and the ledger's retention."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta

from memory.domain.markdown import render
from memory.domain.node import Node
from memory.models import AuditRow

CHUNK = 500


def audit_record(*, operation: str, node: Node, now: datetime, detail: dict | None = None) -> AuditRow:
    """Append one audit row holding the node's markdown as it was before `operation`."""
    return AuditRow.objects.create(
        operation=operation, node_uid=node.id, snapshot=render(node), detail=detail or {}, performed_at=now,
    )


def audit_note_many(*, operation: str, entries: Iterable[tuple[str, dict]], now: datetime) -> int:
    """Append snapshot-free rows (node uid, detail) for bookkeeping writes such as importance or new edges.

    The detail says what changed, so these rows stay small; returns how many were written.
    """
    rows = [AuditRow(operation=operation, node_uid=uid, snapshot="", detail=detail, performed_at=now)
            for uid, detail in entries]
    AuditRow.objects.bulk_create(rows, batch_size=CHUNK)
    return len(rows)


def audit_prune(
    *, now: datetime, default_days: int, max_rows: int, days_by_operation: Mapping[str, int] | None = None,
) -> int:
    """Apply retention: drop rows older than their operation's window, then the oldest beyond `max_rows`.

    Returns the number of rows deleted. Windows are in days; an operation not named keeps `default_days`.
    """
    per_op = dict(days_by_operation or {})
    deleted = 0
    for operation, days in per_op.items():
        deleted += AuditRow.objects.filter(operation=operation, performed_at__lt=now - timedelta(days=days)).delete()[0]
    rest = AuditRow.objects.exclude(operation__in=list(per_op))
    deleted += rest.filter(performed_at__lt=now - timedelta(days=default_days)).delete()[0]
    excess = AuditRow.objects.count() - max_rows
    while excess > 0:
        ids = list(AuditRow.objects.order_by("performed_at", "id").values_list("id", flat=True)[:min(excess, CHUNK)])
        deleted += AuditRow.objects.filter(id__in=ids).delete()[0]
        excess -= len(ids)
    return deleted
