"""Read-only selector for the review inbox: what the agent learned (new memories) and what changed, since a time.

New memories come from the index (created since), changes from the audit ledger. Bookkeeping rows (importance
updates) are left out: they change no memory's meaning.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.cards import node_label
from memory.domain.markdown import parse
from memory.errors import MalformedNodeFile
from memory.models import AuditRow, NodeRow

LEARNED = "learned"
QUIET_OPERATIONS = ("importance",)


@dataclass(frozen=True)
class ActivityEntry:
    """One thing that happened to a memory: learned (created) or an audited operation."""

    at: datetime
    kind: str  # "learned" or the audit operation (update, delete, merge, connect, ...)
    uid: str
    label: str
    exists: bool
    source: str = ""
    detail: dict | None = None


@dataclass(frozen=True)
class ActivityPage:
    entries: list[ActivityEntry]
    total: int
    learned: int
    changed: int


def _snapshot_label(snapshot: str) -> str:
    if not snapshot:
        return ""
    try:
        node = parse(snapshot)
    except MalformedNodeFile:
        return ""
    return node_label(node.title, node.content)


def activity_since(*, since: datetime, offset: int = 0, limit: int = 25) -> ActivityPage:
    """New memories and audited changes since `since`, newest first, one page of them."""
    created = NodeRow.objects.filter(created__gte=since, is_self=False)
    audits = AuditRow.objects.filter(performed_at__gte=since).exclude(operation__in=QUIET_OPERATIONS)
    learned, changed = created.count(), audits.count()
    window = offset + limit
    rows = [(r[0], LEARNED, r[1], r[2], r[3], r[4], None, "") for r in
            created.order_by("-created", "-id").values_list("created", "uid", "title", "content", "source")[:window]]
    rows += [(a[0], a[1], a[2], "", "", "", a[3], a[4]) for a in
             audits.order_by("-performed_at", "-id").values_list("performed_at", "operation", "node_uid", "detail",
                                                                 "snapshot")[:window]]
    rows.sort(key=lambda r: r[0], reverse=True)
    page = rows[offset:window]
    live = {u: node_label(t, c) for u, t, c in NodeRow.objects.filter(uid__in={r[2] for r in page})
            .values_list("uid", "title", "content")}
    entries = []
    for at, kind, uid, title, content, source, detail, snapshot in page:
        label = live.get(uid) or (node_label(title, content) if content else _snapshot_label(snapshot))
        entries.append(ActivityEntry(at=at, kind=kind, uid=uid, label=label or uid[:8], exists=uid in live,
                                     source=source, detail=detail or {}))
    return ActivityPage(entries=entries, total=learned + changed, learned=learned, changed=changed)
