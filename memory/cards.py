"""Read-only selectors for showing memories on screens: display labels, cards, title suggestions, audit history.

Everything returned is evaluated (dataclasses and lists), so a template never runs a query while rendering.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Q

from memory.domain.requests import auto_title
from memory.models import AuditRow, NodeRow

LABEL_CHARS = 48
AUDIT_LIMIT = 25


def node_label(title: str | None, content: str, *, chars: int = LABEL_CHARS) -> str:
    """A memory's display label: its title (or the first line of its content), cut at a word with an ellipsis."""
    text = title or auto_title(content)
    if len(text) <= chars:
        return text
    cut = text[: chars - 1]
    space = cut.rfind(" ")
    if space >= chars // 2:
        cut = cut[:space]
    return cut.rstrip(" ,.;:-") + "…"


@dataclass(frozen=True)
class NodeCard:
    """A memory as review screens show it; `exists` is False when it has been forgotten or merged away."""

    uid: str
    short_id: str
    label: str
    content: str
    type: str
    tier: str
    space: str | None
    tags: tuple[str, ...]
    importance: float
    access_count: int
    exists: bool = True
    title: str = ""


def node_cards(*, uids: list[str]) -> dict[str, NodeCard]:
    """Cards for the given ids from the index; unknown ids get a placeholder card with exists=False."""
    found = {r[0]: NodeCard(uid=r[0], short_id=r[1], label=node_label(r[2], r[3]), content=r[3], type=r[4],
                            tier=r[5], space=r[6], tags=tuple(r[7].split()), importance=r[8], access_count=r[9],
                            title=r[2] or auto_title(r[3]))
             for r in NodeRow.objects.filter(uid__in=list(uids)).values_list(
                 "uid", "short_id", "title", "content", "type", "tier", "space", "tags_text", "importance",
                 "access_count")}
    return {u: found.get(u) or NodeCard(uid=u, short_id=u[:8], label="(no longer in memory)", content="", type="",
                                        tier="", space=None, tags=(), importance=0.0, access_count=0, exists=False)
            for u in uids}


def node_labels(*, uids: list[str]) -> dict[str, str]:
    """Display labels for the given ids (unknown ids are left out)."""
    return {u: node_label(t, c) for u, t, c in NodeRow.objects.filter(uid__in=uids).values_list("uid", "title",
                                                                                               "content")}


@dataclass(frozen=True)
class NodeOption:
    uid: str
    short_id: str
    label: str
    title: str = ""


def node_suggest(*, text: str, exclude: str | None = None, limit: int = 12) -> list[NodeOption]:
    """Memories whose title or content contains `text`, or whose id starts with it, most important first."""
    text = text.strip()
    if not text:
        return []
    qs = NodeRow.objects.filter(Q(title__icontains=text) | Q(content__icontains=text)
                                | Q(uid__startswith=text.lower()))
    if exclude:
        qs = qs.exclude(uid=exclude)
    return [NodeOption(uid=u, short_id=s, label=node_label(t, c), title=t or auto_title(c))
            for u, s, t, c in qs.order_by("-importance", "uid").values_list("uid", "short_id", "title",
                                                                             "content")[:limit]]


def nodes_titled(*, title: str, exclude: str | None = None, limit: int = 5) -> list[NodeOption]:
    """Memories whose title (or, untitled, first line) is exactly `title`, ignoring case."""
    title = title.strip()
    if not title:
        return []
    qs = NodeRow.objects.filter(Q(title__iexact=title) | Q(title="", content__istartswith=title))
    if exclude:
        qs = qs.exclude(uid=exclude)
    found = [NodeOption(uid=u, short_id=s, label=node_label(t, c), title=t or auto_title(c))
             for u, s, t, c in qs.order_by("-importance", "uid").values_list("uid", "short_id", "title",
                                                                              "content")[:limit * 4]]
    return [o for o in found if o.title.casefold() == title.casefold()][:limit]


@dataclass(frozen=True)
class AuditEntry:
    operation: str
    performed_at: datetime
    detail: dict
    snapshot: str


def node_audit(*, node_uid: str, limit: int = AUDIT_LIMIT) -> list[AuditEntry]:
    """The audit ledger of one memory, newest first."""
    return [AuditEntry(operation=a.operation, performed_at=a.performed_at, detail=a.detail, snapshot=a.snapshot)
            for a in AuditRow.objects.filter(node_uid=node_uid).order_by("-performed_at", "-id")[:limit]]
