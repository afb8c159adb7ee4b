"""Reads for maintenance: node facts from the index rows, stored vectors, edges, ledgers."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from django.db.models import Count, Max

from maintenance.detectors.clusters import CONSOLIDATED_TAG
from maintenance.detectors.facts import NodeFacts, ProposalKind, text_hash
from maintenance.detectors.payloads import ConsolidationPayload, MergePayload, payload_load
from maintenance.detectors.similarity import VectorTable
from maintenance.errors import ProposalNotFound
from maintenance.models import JobRunRow, JobStateRow, MaintenanceSessionRow, NodeSeenRow, ProposalRow
from memory import runtime
from memory.domain.enums import EdgeType
from memory.domain.identity import ABOUT_SELF_TAG, SELF_TAGS
from memory.errors import AmbiguousNodeRef, ValidationFailed
from memory.models import EdgeRow, MergeHistoryRow, NodeRow
from memory.search import vectors
from memory.selectors import node_get, node_snapshot

FACT_FIELDS = ("id", "uid", "type", "tier", "space", "space_locked", "title", "content", "tags_text", "created",
               "updated", "last_accessed", "last_review", "stability", "importance", "access_count", "is_self",
               "embed_hash", "indexed_seq")


def _facts(values: tuple) -> NodeFacts:
    (row_id, uid, type_, tier, space, locked, title, content, tags, created, updated, accessed, review, stability,
     importance, access_count, is_self, embed_hash, seq) = values
    return NodeFacts(row_id, uid, type_, tier, space, locked, title or "", content, tuple(tags.split()), created,
                     updated, accessed, review, stability, importance, access_count, is_self, embed_hash, seq)


def facts_all() -> dict[int, NodeFacts]:
    """Every indexed node's facts by row id."""
    return {v[0]: _facts(v) for v in NodeRow.objects.order_by("indexed_seq", "id").values_list(*FACT_FIELDS)}


def facts_where(**filters) -> list[NodeFacts]:
    """Facts of the rows matching ORM filters, in write order."""
    return [_facts(v) for v in NodeRow.objects.filter(**filters).order_by("indexed_seq", "id").values_list(*FACT_FIELDS)]


def text_hashes(uids: list[str]) -> dict[str, str]:
    """What each live memory says now (uid -> text hash); missing uids are gone."""
    out: dict[str, str] = {}
    for i in range(0, len(uids), 500):
        out.update((uid, text_hash(title, content)) for uid, title, content in
                   NodeRow.objects.filter(uid__in=uids[i:i + 500]).values_list("uid", "title", "content"))
    return out


def vector_table() -> VectorTable:
    """All stored vectors, unit length."""
    return VectorTable.from_rows(vectors.all_vectors())


def top_seq() -> int:
    """The latest write sequence in the index."""
    return NodeRow.objects.aggregate(m=Max("indexed_seq"))["m"] or 0


def linked_keys(edge_types: tuple[str, ...] | None = None) -> set[str]:
    """Pair keys ("uidA:uidB", sorted) of node pairs joined by any edge (of these types), either direction."""
    rows = EdgeRow.objects.all()
    if edge_types:
        rows = rows.filter(edge_type__in=edge_types)
    return {":".join(sorted(p)) for p in rows.values_list("source__uid", "target__uid")}


def degrees() -> dict[str, int]:
    """Edges in plus edges out, per node uid."""
    counts: Counter[str] = Counter()
    for source, target in EdgeRow.objects.values_list("source__uid", "target__uid"):
        counts[source] += 1
        counts[target] += 1
    return dict(counts)


def neighbour_spaces(uids: list[str]) -> dict[str, list[str | None]]:
    """For each node, its edge neighbours' spaces (edges both ways), in edge order."""
    out: dict[str, list[str | None]] = {u: [] for u in uids}
    for source, target, s_space, t_space in (EdgeRow.objects.filter(source__uid__in=uids) | EdgeRow.objects.filter(
            target__uid__in=uids)).order_by("id").values_list("source__uid", "target__uid", "source__space",
                                                            "target__space"):
        if source in out:
            out[source].append(t_space)
        if target in out:
            out[target].append(s_space)
    return out


def job_state(job: str) -> JobStateRow:
    return JobStateRow.objects.get_or_create(job=job)[0]


def seen_hashes(job: str, uids: list[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for i in range(0, len(uids), 500):
        out.update(NodeSeenRow.objects.filter(job=job, node_uid__in=uids[i:i + 500]).values_list("node_uid", "embed_hash"))
    return out


def pending_proposal_uids(kind: str | None = None) -> set[str]:
    """Node uids named by pending proposals (of one kind)."""
    rows = ProposalRow.objects.filter(status="pending")
    if kind:
        rows = rows.filter(kind=kind)
    return {uid for uids in rows.values_list("node_uids", flat=True) for uid in uids}


def decided_at_by_key(kind: str) -> dict[str, object]:
    """When proposals of a kind were last decided (approved, rejected or expired), by subject key."""
    out: dict[str, object] = {}
    for key, at in ProposalRow.objects.filter(kind=kind, decided_at__isnull=False).exclude(status="pending") \
            .order_by("decided_at").values_list("key", "decided_at"):
        out[key] = at
    return out


def _proposals(status: str | None, kind: str | None):
    """Proposals of one status and one kind (None or blank: any)."""
    rows = ProposalRow.objects.all()
    if status:
        rows = rows.filter(status=status)
    if kind:
        rows = rows.filter(kind=kind)
    return rows


def proposals_list(*, status: str | None = "pending", kind: str | None = None, limit: int = 50) -> list[ProposalRow]:
    return list(_proposals(status, kind).order_by("-priority", "-created_at")[:limit])


def proposal_get(*, proposal_id: str) -> ProposalRow | None:
    """One proposal by id, or None."""
    return ProposalRow.objects.filter(proposal_id=proposal_id).first()


def proposal_status_counts() -> dict[str, int]:
    """How many proposals there are per status."""
    return {s: n for s, n in ProposalRow.objects.values_list("status").annotate(n=Count("id")).order_by()}


def proposal_group_list(*, status: str | None = "pending", kind: str | None = None, limit: int = 50,
                        offset: int = 0) -> list[dict]:
    """Groups of proposals (one cause each), strongest first: key, label, kind, count, priority, proposal ids.

    A proposal of no group is listed alone under the key `proposal:<id>`, which proposal_group_decide accepts too.
    """
    rows = _proposals(status, kind)
    groups: dict[str, dict] = {}
    for key, label, kind_, pid, priority, created in rows.order_by("-priority", "-created_at", "-id").values_list(
            "group_key", "group_label", "kind", "proposal_id", "priority", "created_at"):
        group = groups.setdefault(key or f"proposal:{pid}", {
            "group_key": key or f"proposal:{pid}", "label": label, "kind": kind_, "count": 0, "priority": priority,
            "created_at": created, "proposal_ids": []})
        group["count"] += 1
        group["proposal_ids"].append(pid)
        group["created_at"] = max(group["created_at"], created)
    ordered = sorted(groups.values(), key=lambda g: (-g["priority"], -g["count"], g["group_key"]))
    return ordered[offset:offset + limit]


def node_briefs(uids: list[str]) -> dict[str, dict]:
    """Short views of nodes for proposal listings: id, title, type, tier, space, content (first 400 chars)."""
    return {r["uid"]: {"id": r["uid"], "title": r["title"], "type": r["type"], "tier": r["tier"],
                       "space": r["space"], "content": r["content"][:400]}
            for r in NodeRow.objects.filter(uid__in=uids).values("uid", "title", "type", "tier", "space", "content")}


def job_runs(*, job: str | None = None, limit: int = 50) -> list[JobRunRow]:
    rows = JobRunRow.objects.all()
    if job:
        rows = rows.filter(job=job)
    return list(rows[:limit])


def merges_list(*, limit: int = 20) -> list[MergeHistoryRow]:
    """Merges that happened; a row still pending (a merge in flight, or one a kill interrupted, until the next
    sync settles it) is not a merge yet and cannot be undone."""
    return list(MergeHistoryRow.objects.filter(pending=False)
                .defer("kept_before", "removed_before", "neighbours")[:limit])


def session_get(session_id: str) -> MaintenanceSessionRow | None:
    return MaintenanceSessionRow.objects.filter(session_id=session_id).first()


def session_latest() -> MaintenanceSessionRow | None:
    return MaintenanceSessionRow.objects.order_by("-created_at", "-id").first()


MIN_PROPOSAL_PREFIX = 4


def proposal_ref(ref: str) -> str:
    """The full proposal id for an id or a unique prefix of at least 4 characters (as memory and merge ids)."""
    ref = (ref or "").strip().lower()
    if not all(c in "0123456789abcdef-" for c in ref):
        raise ProposalNotFound(f"No proposal {ref}")
    if len(ref) < MIN_PROPOSAL_PREFIX:
        raise ValidationFailed(f"'{ref}' is too short: give a proposal id or at least {MIN_PROPOSAL_PREFIX} of its "
                               "characters")
    if ProposalRow.objects.filter(proposal_id=ref).exists():
        return ref
    matches = list(ProposalRow.objects.filter(proposal_id__startswith=ref).order_by("proposal_id")
                   .values_list("proposal_id", flat=True)[:11])
    if not matches:
        raise ProposalNotFound(f"No proposal {ref}")
    if len(matches) > 1:
        raise AmbiguousNodeRef(f"Id prefix {ref} matches {len(matches)}+ proposals; use more characters",
                               details={"candidates": matches[:10]})
    return matches[0]


# ---------------------------------------------------------------------------
# What approving a proposal writes (the inbox's and the API's "edit before approving")
# ---------------------------------------------------------------------------

EDITABLE_KINDS = (ProposalKind.MERGE.value, ProposalKind.CONSOLIDATION.value)  # approving writes composed text
KEPT_TAGS = frozenset((*SELF_TAGS, ABOUT_SELF_TAG, CONSOLIDATED_TAG))  # markers Ormah reads: shown, never edited


@dataclass(frozen=True)
class ProposalResult:
    """The memory approving a merge or consolidation proposal would write, read from the files now."""

    proposal_id: str
    kind: str
    title: str
    content: str
    tags: tuple[str, ...]  # the ones a person may change
    kept_tags: tuple[str, ...]  # written whatever the person's tags say (KEPT_TAGS)
    seen: dict[str, str] = field(default_factory=dict)  # uid -> file hash of every memory it reads, as read


def proposal_result(*, proposal_id: str) -> ProposalResult:
    """The title, content and tags approving the proposal would write, with the file hashes it was computed from.

    A merge keeps its merged text, else the kept memory's (title: the kept one's, else the removed one's) and the
    union of both memories' tags; a consolidation writes its proposed title and content, tagged `consolidated`
    (and `about_self` when a source is about the person). Raises ProposalNotFound, ValidationFailed (a kind whose
    approval writes no text: conflict, link, decay), NodeNotFound (a memory it reads is gone).
    """
    row = ProposalRow.objects.filter(proposal_id=proposal_id).first()
    if row is None:
        raise ProposalNotFound(f"No proposal {proposal_id}")
    if row.kind not in EDITABLE_KINDS:
        raise ValidationFailed(f"Approving a {row.kind} proposal writes no text to edit (only merge and "
                               "consolidation proposals have one)")
    store = runtime.store()
    seen = {uid: node_snapshot(store=store, ref=uid).hash for uid in row.node_uids}
    p = payload_load(row.kind, row.payload)
    if isinstance(p, MergePayload):
        keeper, gone = node_get(store=store, ref=p.keep_id), node_get(store=store, ref=p.discard_id)
        title = p.merged_title or keeper.title or gone.title or ""
        content = p.merged_content or keeper.content
        tags = tuple(dict.fromkeys(keeper.tags + gone.tags))
    else:
        assert isinstance(p, ConsolidationPayload)
        sources = [node_get(store=store, ref=uid) for uid in p.node_ids]
        identity = any(ABOUT_SELF_TAG in n.tags for n in sources) or EdgeRow.objects.filter(
            target__uid__in=p.node_ids, source__is_self=True, edge_type=EdgeType.DEFINES).exists()
        title, content = p.title, p.content
        tags = (CONSOLIDATED_TAG, *((ABOUT_SELF_TAG,) if identity else ()))
    return ProposalResult(proposal_id=row.proposal_id, kind=row.kind, title=title, content=content,
                          tags=tuple(t for t in tags if t not in KEPT_TAGS),
                          kept_tags=tuple(t for t in tags if t in KEPT_TAGS), seen=seen)
