"""Audit ledger writes: a snapshot of a node before an operation changes or removes it."""

from __future__ import annotations

from datetime import datetime

from memory.domain.markdown import render
from memory.domain.node import Node
from memory.models import AuditRow


def audit_record(*, operation: str, node: Node, now: datetime, detail: dict | None = None) -> AuditRow:
    """Append one audit row holding the node's markdown as it was before `operation`."""
    return AuditRow.objects.create(
        operation=operation, node_uid=node.id, snapshot=render(node), detail=detail or {}, performed_at=now,
    )
