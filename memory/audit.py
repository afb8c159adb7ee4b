"""Audit ledger rows: a snapshot of a node before an operation changes or removes it (written by the write door)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

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
