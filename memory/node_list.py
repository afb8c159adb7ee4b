"""Listing memories page by page (GET /api/agent/nodes, the MCP list_recent tool): filters and keyset cursors.

A cursor is the sort key of the last row of a page (timestamp and id), encoded opaque; the next page starts
strictly after it, so rows written between two requests never shift a page or repeat a row.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from memory.domain.requests import tag_normal
from memory.errors import ValidationFailed
from memory.models import NodeRow

ORDERS = ("updated", "created")
MAX_LIMIT = 100


@dataclass(frozen=True)
class NodePage:
    rows: list[NodeRow]
    next_cursor: str | None


def _encode(order: str, row: NodeRow) -> str:
    raw = json.dumps([order, getattr(row, order).isoformat(), row.uid]).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode(cursor: str, order: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        kind, stamp, uid = json.loads(raw)
        when = datetime.fromisoformat(stamp)
    except (ValueError, TypeError):
        raise ValidationFailed("cursor: not a cursor this API returned (pass next_cursor as it came)") from None
    if kind != order:
        raise ValidationFailed(f"cursor: it belongs to a listing ordered by {kind}, not {order}")
    return when, str(uid)


def nodes_page(*, types: list[str] | None = None, tiers: list[str] | None = None, spaces: list[str | None] | None = None,
               tags: list[str] | None = None, include_outdated: bool = False, order: str = "updated",
               limit: int = 20, cursor: str | None = None) -> NodePage:
    """One page of memories, newest first by `order`, with the cursor of the next page (None on the last)."""
    if order not in ORDERS:
        raise ValidationFailed(f"order: must be one of {', '.join(ORDERS)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise ValidationFailed(f"limit: must be between 1 and {MAX_LIMIT}")
    rows = NodeRow.objects.all()
    if types:
        rows = rows.filter(type__in=types)
    if tiers:
        rows = rows.filter(tier__in=tiers)
    if spaces:
        named = [s for s in spaces if s is not None]
        rows = rows.filter(Q(space__in=named) | (Q(space__isnull=True) if None in spaces else Q(pk__in=[])))
    for tag in {tag_normal(t) for t in tags or []} - {""}:
        # each tag asked: the tag rows recall's filter reads, exact (LIKE over tags_text folded case on SQLite only)
        rows = rows.filter(tag_rows__tag=tag)
    if not include_outdated:
        rows = rows.filter(valid_until__isnull=True)
    if cursor:
        when, uid = _decode(cursor, order)
        rows = rows.filter(Q(**{f"{order}__lt": when}) | Q(**{order: when, "uid__lt": uid}))
    page = list(rows.order_by(f"-{order}", "-uid")[: limit + 1])
    more = len(page) > limit
    page = page[:limit]
    return NodePage(rows=page, next_cursor=_encode(order, page[-1]) if more and page else None)
