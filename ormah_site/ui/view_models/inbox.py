"""The review inbox's view-models: decision cards (one per proposal, or one per group of proposals that share a
cause), their previews and reasons in plain words, pages, and what changed since a time.

Reasons are built from the typed fields of a proposal (kind, payload, signals), never from the detectors'
debug text. Everything returned is evaluated, so templates never query while rendering.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.utils.safestring import SafeString

from maintenance.selectors import EDITABLE_KINDS, proposal_get, proposal_status_counts, proposals_list
from memory.activity import ActivityEntry, ActivityPage, activity_since
from memory.cards import NodeCard
from ormah_site.ui.diff import MAX_CHARS, Piece, diff_is_cut, word_diff
from ormah_site.ui.render import markdown_html
from ormah_site.ui.view_models.review import ProposalView, proposal_views

PAGE_SIZE = 20
QUEUE_LIMIT = 2000  # pending proposals read per page view (the queue is capped well below this)
SAMPLE_PAIRS = 4  # pairs a group card lists
STATUSES = ("pending", "approved", "rejected", "expired")
SINCE_CHOICES = (("1d", "the last day", timedelta(days=1)), ("7d", "the last 7 days", timedelta(days=7)),
                 ("30d", "the last 30 days", timedelta(days=30)))
DEFAULT_SINCE = "7d"

KIND_NOUNS = {"merge": "Merge", "conflict": "Conflict", "link": "Connection", "consolidation": "Consolidation",
              "decay": "Archive"}
EDGE_WORDS = {
    "evolved_from": "the newer one updates the older one (the older stays, marked as evolved)",
    "supersedes": "the newer one replaces the older one (the older is marked superseded)",
    "contradicts": "they contradict each other (both get a warning when recalled)",
    "related_to": "they are related", "supports": "one supports the other", "part_of": "one is part of the other",
    "depends_on": "one depends on the other", "derived_from": "one is derived from the other",
}
SIGNAL_WORDS = {"numbers": "numbers", "dates": "dates", "negation": "one says the opposite of the other",
                "change": "one says something changed (\"no longer\", \"switched\")", "value": "values",
                "antonym": "one says the opposite of the other", "reversed": "one says the opposite of the other"}
OPERATION_WORDS = {
    "learned": "Learned", "update": "Edited", "delete": "Forgotten", "restore": "Restored", "merge": "Merged",
    "merge_undo": "Merge undone", "consolidate": "Combined into a new memory", "mark_outdated": "Marked outdated",
    "connect": "Connected", "promote": "Promoted", "demote": "Moved out of core", "revert": "Change undone",
}
_DEBUG = re.compile(r"\s*\((?:[^()]*(?:=|cosine|score|retrievability)[^()]*)\)", re.IGNORECASE)


# ---------------------------------------------------------------------------
# Cards
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Preview:
    """What approving changes, shown before the decision."""

    diff: list[Piece] = field(default_factory=list)  # old memory -> new memory (merge, conflict)
    diff_from: str = ""
    diff_to: str = ""
    diff_cut_at: int = 0  # the diff compared only the first this many characters (0: the whole texts)
    result_title: str = ""
    result_html: SafeString | str = ""  # merged or consolidated text, rendered markdown
    result_label: str = ""
    effect: str = ""  # one sentence: what approving does

    @property
    def diff_cut_label(self) -> str:
        return f"{self.diff_cut_at:,}"


@dataclass(frozen=True)
class InboxCard:
    """One decision: a single proposal, or a group of proposals that share a cause (decided together)."""

    key: str
    kind: str
    status: str
    title: str
    reason: str
    proposals: list[ProposalView]
    preview: Preview
    group_label: str = ""

    @property
    def ids(self) -> list[str]:
        return [p.id for p in self.proposals]

    @property
    def count(self) -> int:
        return len(self.proposals)

    @property
    def is_group(self) -> bool:
        return len(self.proposals) > 1

    @property
    def first(self) -> ProposalView:
        return self.proposals[0]

    @property
    def editable(self) -> bool:
        """Its result can be edited before approving: one pending merge or consolidation (not a group)."""
        return not self.is_group and self.status == "pending" and self.kind in EDITABLE_KINDS

    @property
    def nodes(self) -> list[NodeCard]:
        return self.first.nodes

    @property
    def sample(self) -> list[ProposalView]:
        return self.proposals[:SAMPLE_PAIRS]

    @property
    def more(self) -> int:
        return max(0, len(self.proposals) - SAMPLE_PAIRS)


def _clean(reason: str) -> str:
    """A detector's reason without its debug numbers ("score=0.84, embed=0.92")."""
    text = _DEBUG.sub("", reason or "").strip()
    return "" if "=" in text else text.rstrip(".")


def _similar_words(score: float) -> str:
    if score >= 0.95:
        return "say the same thing in almost the same words"
    if score >= 0.85:
        return "say nearly the same thing"
    return "overlap a lot"


def _card_node(p: ProposalView, uid: str | None) -> NodeCard | None:
    return next((n for n in p.nodes if n.uid == uid), None)


def plain_reason(p: ProposalView) -> str:
    """Why the proposal was made, in words a person reads (from its typed fields)."""
    payload = p.payload or {}
    kinds = {n.type for n in p.nodes if n.type}
    noun = f"{kinds.pop()} memories" if len(kinds) == 1 else "memories"
    why = _clean(p.reason)
    if p.kind == "merge":
        base = f"These two {noun} {_similar_words(p.score)}"
        return f"{base}. {why[:1].upper()}{why[1:]}." if why and not why.lower().startswith("near-duplicate") \
            else f"{base}."
    if p.kind == "conflict":
        signals = [SIGNAL_WORDS.get(s, s.replace("_", " ")) for s in payload.get("signals") or []]
        if signals:
            return f"Two {noun} about the same thing that differ in their {', '.join(signals)}.".replace(
                "their one says", "that one says")
        return f"Two {noun} about the same thing that disagree" + (f": {why}." if why else ".")
    if p.kind == "link":
        spaces = sorted({n.space or "global" for n in p.nodes})
        where = f" in different spaces ({' and '.join(spaces)})" if len(spaces) > 1 else ""
        return f"These {noun} are about the same subject{where} but not connected."
    if p.kind == "decay":
        return "Not recalled for a long time, so it is hard to bring back when it matters."
    if p.kind == "consolidation":
        return f"{len(p.nodes)} working memories about one topic" + (f": {why}." if why and "cosine" not in
                                                                        why.lower() else ".")
    return why or p.action


def _preview(p: ProposalView) -> Preview:
    payload = p.payload or {}
    if p.kind == "merge":
        keep, gone = _card_node(p, p.keep_id), _card_node(p, p.discard_id)
        merged = payload.get("merged_content")
        effect = ("Approving keeps one memory with the merged text and removes the other; undo brings both back."
                  if merged else "Approving keeps the first memory as it is and removes the second, which adds "
                                 "nothing to it; undo brings it back.")
        old, new = gone.content if gone else "", keep.content if keep else ""
        return Preview(
            diff=word_diff(old, new), diff_from="removed", diff_to="kept",
            diff_cut_at=MAX_CHARS if diff_is_cut(old, new) else 0,
            result_title=payload.get("merged_title") or (keep.title if keep else ""),
            result_html=markdown_html(merged or (keep.content if keep else "")), result_label="After the merge",
            effect=effect)
    if p.kind == "conflict":
        newer, older = _card_node(p, payload.get("source_id")), _card_node(p, payload.get("target_id"))
        edge = payload.get("edge") or "contradicts"
        old, new = older.content if older else "", newer.content if newer else ""
        return Preview(diff=word_diff(old, new), diff_from="older", diff_to="newer",
                       diff_cut_at=MAX_CHARS if diff_is_cut(old, new) else 0,
                       effect=f"Approving records that {EDGE_WORDS.get(edge, edge.replace('_', ' '))}; neither "
                              "memory is deleted.")
    if p.kind == "consolidation":
        n = len(p.nodes)
        return Preview(result_title=payload.get("title") or "", result_html=markdown_html(payload.get("content") or ""),
                       result_label="The combined memory",
                       effect=f"Approving writes one memory that combines these {n} and archives them (kept, "
                              "marked superseded); undo removes it and restores them.")
    if p.kind == "link":
        edge = payload.get("edge") or "related_to"
        return Preview(effect=f"Approving connects them: {EDGE_WORDS.get(edge, edge.replace('_', ' '))}.")
    if p.kind == "decay":
        return Preview(effect="Approving moves it to the archive: kept and searchable, but out of everyday recall "
                              "and whispers.")
    return Preview(effect=p.action)


def _title(p: ProposalView) -> str:
    labels = [n.label for n in p.nodes]
    if p.kind == "merge":
        return "Merge near-duplicates"
    if p.kind == "conflict":
        return "Possible contradiction" if (p.payload or {}).get("edge") == "contradicts" else "Possible update"
    if p.kind == "consolidation":
        return f"Combine {len(labels)} memories"
    if p.kind == "link":
        return "Connect related memories"
    if p.kind == "decay":
        return "Archive an unused memory"
    return p.action


def cards_of(views: list[ProposalView]) -> list[InboxCard]:
    """One card per proposal, except proposals of one group, which share one card (in the first one's place).

    A group of one (every proposal has a group key) is an ordinary card.
    """
    groups: dict[str, list[ProposalView]] = {}
    order: list[tuple[str, ProposalView | str]] = []
    for v in views:
        if v.group_key:
            if v.group_key not in groups:
                groups[v.group_key] = []
                order.append(("g", v.group_key))
            groups[v.group_key].append(v)
        else:
            order.append(("p", v))
    cards = []
    for tag, item in order:
        members = groups[item] if tag == "g" else [item]
        first = members[0]
        grouped = len(members) > 1
        status = first.status if all(m.status == first.status for m in members) else "mixed"
        title = f"{KIND_NOUNS.get(first.kind, first.kind)}: {len(members)} pairs of one pattern" if grouped \
            else _title(first)
        cards.append(InboxCard(
            key=f"g-{_slug(item)}" if grouped else f"p-{first.id}", kind=first.kind, status=status, title=title,
            reason=first.group_label if grouped and first.group_label else plain_reason(first),
            proposals=members, preview=_preview(first), group_label=first.group_label if grouped else ""))
    return cards


def _slug(key: str) -> str:
    """A group key usable in an element id (keys look like "conflict:3f2a...")."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", key)


# ---------------------------------------------------------------------------
# Pages
# ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Page:
    number: int
    pages: int
    total: int

    @property
    def previous(self) -> int | None:
        return self.number - 1 if self.number > 1 else None

    @property
    def next(self) -> int | None:
        return self.number + 1 if self.number < self.pages else None


def _page(total: int, number: int, size: int) -> Page:
    pages = max(1, -(-total // size))
    return Page(number=min(max(1, number), pages), pages=pages, total=total)


@dataclass(frozen=True)
class DecisionsPage:
    status: str
    cards: list[InboxCard]
    page: Page
    counts: dict[str, int]


def decisions_page(*, status: str = "pending", number: int = 1, size: int = PAGE_SIZE) -> DecisionsPage:
    """One page of decision cards of one status, strongest first; groups count as one card."""
    status = status if status in STATUSES else "pending"
    cards = cards_of(proposal_views(proposals_list(status=status, limit=QUEUE_LIMIT)))
    page = _page(len(cards), number, size)
    start = (page.number - 1) * size
    counts = proposal_status_counts()
    return DecisionsPage(status=status, cards=cards[start:start + size], page=page,
                         counts={s: counts.get(s, 0) for s in STATUSES})


def cards_for(*, ids: list[str]) -> list[InboxCard]:
    """The cards of these proposals as they are now (after a decision), in the order given."""
    rows = [r for r in (proposal_get(proposal_id=i) for i in dict.fromkeys(ids)) if r is not None]
    return cards_of(proposal_views(rows))


@dataclass(frozen=True)
class Since:
    code: str
    label: str
    at: datetime


def since_from(value: str | None, *, now: datetime) -> Since:
    """The "since" of the changes view: 1d, 7d, 30d or a date (YYYY-MM-DD); anything else means 7 days."""
    value = (value or "").strip()
    for code, label, delta in SINCE_CHOICES:
        if value == code:
            return Since(code=code, label=label, at=now - delta)
    try:
        day = datetime.fromisoformat(value)
    except ValueError:
        day = None
    if day is not None and len(value) == 10:
        day = day.replace(tzinfo=now.tzinfo)
        return Since(code=value, label=f"{day:%Y-%m-%d}", at=day)
    code, label, delta = next(c for c in SINCE_CHOICES if c[0] == DEFAULT_SINCE)
    return Since(code=code, label=label, at=now - delta)


@dataclass(frozen=True)
class ChangesPage:
    since: Since
    activity: ActivityPage
    page: Page

    @property
    def items(self) -> list[tuple[str, ActivityEntry]]:
        """(what happened, in words; the entry) for each entry of the page."""
        return [(OPERATION_WORDS.get(e.kind, e.kind.replace("_", " ").capitalize()), e)
                for e in self.activity.entries]


def changes_page(*, since: Since, number: int = 1, size: int = 25) -> ChangesPage:
    """One page of what was learned or changed since a time, newest first."""
    number = max(1, number)
    activity = activity_since(since=since.at, offset=(number - 1) * size, limit=size)
    page = _page(activity.total, number, size)
    if page.number != number:  # past the last page: show the last one
        activity = activity_since(since=since.at, offset=(page.number - 1) * size, limit=size)
    return ChangesPage(since=since, activity=activity, page=page)

