"""Audit ledger: the rows (memory.audit, written by the write door) and the ledger's retention."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta

from memory.audit import CHUNK, audit_note_many, audit_record
from memory.models import AuditRow

__all__ = ["audit_note_many", "audit_prune", "audit_record"]


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
