"""The review queue: bounded (a cap and a TTL), one pending proposal per subject, decisions applied via memory services."""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from maintenance.conf import MaintenanceConf
from maintenance.detectors.facts import ProposalDraft, ProposalKind
from maintenance.detectors.payloads import (
    ConsolidationPayload,
    DecayPayload,
    EdgePayload,
    MergePayload,
    payload_load,
)
from maintenance.errors import ProposalChanged, ProposalNotFound, StaleProposal
from maintenance.models import ProposalRow
from maintenance.selectors import EDITABLE_KINDS, KEPT_TAGS, proposal_result, text_hashes
from maintenance.services.context import RunContext
from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.node import utcnow
from memory import runtime
from memory.domain.requests import Content, Tags, Title, validation_message
from memory.errors import Conflict, NodeNotFound, OrmahError, ValidationFailed
from memory.selectors import node_get, node_snapshot
from memory.services import audit_note_many, edge_create, node_merge, node_set_tier, nodes_consolidate
from memory.writes import write_unit

logger = logging.getLogger(__name__)
# Which proposals a full queue keeps: identity decay and merges first, cross-space links last.
KIND_WEIGHT = {ProposalKind.DECAY: 1.0, ProposalKind.MERGE: 1.0, ProposalKind.CONSOLIDATION: 0.9,
               ProposalKind.CONFLICT: 0.8, ProposalKind.LINK: 0.6}
SINGLE_PREFIX = "proposal:"  # the group key under which a proposal of no group is listed and decided
ACTIONS = {"approve": "approved", "approved": "approved", "reject": "rejected", "rejected": "rejected"}


def _status_of(action: str | None) -> str:
    """The status a decision sets ("approved" or "rejected"); raises ValidationFailed for any other action."""
    status = ACTIONS.get((action or "").strip().lower())
    if status is None:
        raise ValidationFailed("action must be approve or reject")
    return status


def draft_priority(draft: ProposalDraft) -> float:
    """The draft's score (0-1) times its kind's weight."""
    return round(draft.score * KIND_WEIGHT.get(draft.kind, 0.5), 4)


def propose(ctx: RunContext, draft: ProposalDraft) -> bool:
    """Queue a draft from a job run and count the outcome (proposed, exists, dropped); True when it was queued.

    Once the queue has refused a draft, weaker ones in the same run are dropped without asking the database.
    """
    priority = draft_priority(draft)
    if ctx.queue_floor is not None and priority <= ctx.queue_floor:
        ctx.counts["dropped"] += 1
        return False
    outcome = proposal_create(draft=draft, conf=ctx.conf, now=ctx.now)
    if outcome == "dropped":
        ctx.queue_floor = max(priority, ctx.queue_floor or 0.0)
    ctx.counts["proposed" if outcome == "created" else outcome] += 1
    return outcome == "created"


def proposal_create(*, draft: ProposalDraft, conf: MaintenanceConf, now: datetime) -> str:
    """Queue a draft: "created", "exists" (already pending) or "dropped" (queue full of stronger proposals).

    Priority is the draft's score (0-1) times its kind's weight; at the cap, a draft of higher priority displaces
    the lowest pending proposal (which expires), so the queue never grows past the cap.
    """
    if ProposalRow.objects.filter(status="pending", key=draft.key).exists():
        return "exists"
    priority = draft_priority(draft)
    pending = ProposalRow.objects.filter(status="pending")
    if pending.count() >= conf.proposal_cap:
        weakest = pending.order_by("priority", "created_at", "id").first()
        if weakest is None or weakest.priority >= priority:
            return "dropped"
        _close(weakest, "expired", now, {"reason": "displaced by a stronger proposal"})
    group_key, group_label = draft.group or ("", "")  # no group: a card of its own
    ProposalRow.objects.create(
        proposal_id=str(uuid.uuid4()), kind=draft.kind, key=draft.key, node_uids=list(draft.node_uids),
        action=draft.action, reason=draft.reason, score=draft.score, priority=priority, payload=draft.payload,
        basis=draft.basis or text_hashes(list(draft.node_uids)), group_key=group_key, group_label=group_label,
        created_at=now,
        expires_at=now + timedelta(days=conf.proposal_ttl_days),
    )
    return "created"


def _changed(row: ProposalRow, now_hashes: dict[str, str]) -> list[str]:
    """The uids of the proposal's basis that changed or vanished since it was made."""
    return [uid for uid, h in row.basis.items() if now_hashes.get(uid) != h]


def proposals_expire_stale(*, now: datetime) -> int:
    """Expire pending proposals whose memories changed or vanished (their pair is examined afresh); returns how many."""
    rows = list(ProposalRow.objects.filter(status="pending").exclude(basis={}))
    current = text_hashes(sorted({uid for r in rows for uid in r.basis}))
    stale = [r.pk for r in rows if _changed(r, current)]
    return ProposalRow.objects.filter(pk__in=stale, status="pending").update(
        status="expired", decided_at=now, result={"reason": "a memory it was made from changed"})


def proposals_expire(*, now: datetime) -> int:
    """Expire pending proposals past their TTL; returns how many."""
    return ProposalRow.objects.filter(status="pending", expires_at__lte=now).update(status="expired", decided_at=now)


def _close(row: ProposalRow, status: str, now: datetime, result: dict) -> None:
    row.status, row.decided_at, row.result = status, now, result
    row.save(update_fields=["status", "decided_at", "result"])


class _NoLongerApplies(Exception):
    """Raised inside the decision's unit when applying failed, so the unit puts back what it wrote."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class ResultEdit(BaseModel):
    """A person's version of what approving a merge or consolidation writes; a field left out is as proposed.

    The rules are an update's (NodePatch): content not blank, at most 64 KiB, no NUL; title at most 300 characters
    (blank: as proposed); tags lowercase words. Tags Ormah reads (KEPT_TAGS) are kept whatever `tags` says.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    title: Title = Field(default=None, description="at most 300 characters; blank or left out: as proposed")
    content: Content | None = Field(default=None, description="markdown, not blank; left out: as proposed")
    tags: Tags | None = Field(default=None, description=(
        "the memory's tags (kept_tags are kept whatever this says); left out: as proposed"))


def proposal_decide(*, proposal_id: str, action: str, decided_by: str = "agent", now: datetime | None = None,
                    edit: ResultEdit | None = None, seen: dict[str, str] | None = None) -> ProposalRow:
    """Approve (apply through memory services) or reject a pending proposal.

    `edit` approves a merge or consolidation with a person's title, content or tags instead of the proposed ones
    (maintenance.selectors.proposal_result says what is proposed). `seen` (uid -> file hash, as proposal_result
    gives them) is what the caller showed: on an approval, when a memory's file differs from it now, nothing is
    applied and ProposalChanged says what the files hold now (the proposal stays pending); when it matches, the
    caller has seen the memories as they are and the proposal applies to them even if they changed since it was
    made. A rejection writes nothing, so it is not refused for a stale `seen`.

    Invariants: the decision is made under the memory write lock (the staleness check and the apply see the same
    files), and an approval's status and result commit after what applying it committed (a merge's history row),
    so a kill in between leaves the proposal pending, never approved without its merge history; when applying
    fails, every file it wrote is put back before the proposal expires.
    Raises ProposalNotFound, ValidationFailed (unknown action; an edit of a rejection or of a kind that writes no
    text; `seen` not naming every memory of the proposal), ProposalChanged, Conflict (not pending, expired, or no
    longer applicable because its memories changed or vanished; the proposal then expires).
    """
    now = now or utcnow()
    status = _status_of(action)
    row = ProposalRow.objects.filter(proposal_id=proposal_id).first()
    if row is None:
        raise ProposalNotFound(f"No proposal {proposal_id}")
    _check_edit(row, status, edit, seen)
    if row.status == "pending" and row.expires_at <= now:
        _close(row, "expired", now, {"reason": "expired before a decision"})
    decided = {"status": status, "decided_at": now, "decided_by": decided_by[:100]}
    try:
        with write_unit() as unit:
            row.refresh_from_db()
            if row.status != "pending":
                raise Conflict(f"Proposal {proposal_id} is already {row.status}")
            if seen is None:
                _refuse_if_stale(row, now)
            elif status == "approved":  # a rejection writes nothing: what the caller saw cannot be out of date
                _refuse_if_changed(row, seen)
            if status == "rejected":
                ProposalRow.objects.filter(pk=row.pk, status="pending").update(**decided)
            else:
                try:
                    result = _apply(row, now, edit, decided_by)
                except (OrmahError, ValidationError) as exc:
                    raise _NoLongerApplies(
                        exc.message if isinstance(exc, OrmahError) else validation_message(exc)) from exc
                # Only approvals and rejections take the write lock, so nothing decided it meanwhile; an expiry by
                # the retention job in between loses to the person's decision, which has been applied.
                unit.on_commit(lambda: ProposalRow.objects.filter(pk=row.pk).update(**decided, result=result))
    except _NoLongerApplies as exc:
        ProposalRow.objects.filter(pk=row.pk, status="pending").update(
            status="expired", decided_at=now, decided_by=decided_by[:100], result={"error": exc.message})
        raise Conflict(f"Proposal {proposal_id} no longer applies: {exc.message}") from exc.__cause__
    row.refresh_from_db()
    return row


def _check_edit(row: ProposalRow, status: str, edit: ResultEdit | None, seen: dict[str, str] | None) -> None:
    """Refuse an edit or a `seen` that cannot apply, before anything is locked (the proposal stays pending)."""
    if edit is not None and status != "approved":
        raise ValidationFailed("An edited result is approved, not rejected: send action approve")
    if edit is not None and row.kind not in EDITABLE_KINDS:
        raise ValidationFailed(f"Approving a {row.kind} proposal writes no text to edit (only merge and "
                               "consolidation proposals have one)")
    if seen is not None and set(seen) != set(row.node_uids):
        raise ValidationFailed("seen must give the file hash of every memory the proposal reads, and only those: "
                               + ", ".join(row.node_uids))


def _refuse_if_changed(row: ProposalRow, seen: dict[str, str]) -> None:
    """Raise ProposalChanged (the proposal stays pending) when a memory's file is not the one the caller saw."""
    store = runtime.store()
    changed = []
    for uid in row.node_uids:
        try:
            now_hash = node_snapshot(store=store, ref=uid).hash
        except NodeNotFound:
            changed.append({"id": uid, "gone": True})
            continue
        if now_hash != seen[uid]:
            node = node_get(store=store, ref=uid)
            changed.append({"id": uid, "title": node.title or "", "content": node.content, "hash": now_hash})
    if changed:
        raise ProposalChanged(
            f"Proposal {row.proposal_id} was not applied: {len(changed)} of its memories changed on disk since "
            "they were shown; look at them as they are now and approve again", details={
                "proposal_id": row.proposal_id, "changed": changed})


def _refuse_if_stale(row: ProposalRow, now: datetime) -> None:
    """Expire the proposal and raise StaleProposal when a memory it was made from changed or vanished."""
    changed = _changed(row, text_hashes(list(row.basis)))
    if not changed:
        return
    gone = [u for u in changed if u not in text_hashes(changed)]
    what = ", ".join(u[:8] + (" (forgotten)" if u in gone else "") for u in changed)
    ProposalRow.objects.filter(pk=row.pk, status="pending").update(
        status="expired", decided_at=now, result={"reason": "a memory it was made from changed", "changed": changed})
    raise StaleProposal(
        f"Proposal {row.proposal_id} is stale: memory {what} changed after it was proposed, so it was not applied "
        "and has expired; the next sleep cycle looks at these memories again",
        details={"proposal_id": row.proposal_id, "changed": changed})


@dataclass(frozen=True)
class GroupDecision:
    """What one decision on a group did to each of its pending proposals."""

    group_key: str
    status: str  # approved | rejected
    decided: list[str] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # expired: a memory changed since it was proposed
    failed: dict[str, str] = field(default_factory=dict)  # no longer applicable (expired), with the reason


def proposal_group_decide(*, group_key: str, action: str, decided_by: str = "agent", now: datetime | None = None,
                          proposal_ids: list[str] | None = None) -> GroupDecision:
    """Approve or reject every pending proposal of a group: one decision for proposals that share a cause.

    `proposal_ids` limits the decision to the group's proposals a person saw (one that joined the group since is
    left pending). Each proposal is decided on its own (proposal_decide): stale ones expire and are listed, ones
    that no longer apply are listed with the reason, the rest are decided. Raises ValidationFailed (unknown
    action) and ProposalNotFound when the group has no pending proposal (among `proposal_ids`).
    """
    now = now or utcnow()
    status = _status_of(action)
    pending = ProposalRow.objects.filter(status="pending")
    if group_key.startswith(SINGLE_PREFIX):  # a proposal of no group, listed on its own
        pending = pending.filter(group_key="", proposal_id=group_key.removeprefix(SINGLE_PREFIX))
    else:
        pending = pending.filter(group_key=group_key)
    if proposal_ids is not None:
        pending = pending.filter(proposal_id__in=proposal_ids)
    ids = list(pending.order_by("-priority", "created_at", "id").values_list("proposal_id", flat=True))
    if not ids:
        raise ProposalNotFound(f"No pending proposals in group {group_key}")
    outcome = GroupDecision(group_key=group_key, status=status)
    for proposal_id in ids:
        try:
            proposal_decide(proposal_id=proposal_id, action=status, decided_by=decided_by, now=now)
        except StaleProposal:
            outcome.stale.append(proposal_id)
        except (Conflict, ProposalNotFound) as exc:
            outcome.failed[proposal_id] = exc.message
        else:
            outcome.decided.append(proposal_id)
    logger.info("Group %s %s: %d decided, %d stale, %d failed", group_key, status, len(outcome.decided),
                len(outcome.stale), len(outcome.failed))
    return outcome


def _edited(row: ProposalRow, edit: ResultEdit) -> tuple[str | None, str | None, list[str] | None, list[str]]:
    """The person's title, content and tags (kept tags added back; None: as proposed) and which fields differ."""
    proposed = proposal_result(proposal_id=row.proposal_id)
    title = edit.title if edit.title not in (None, proposed.title) else None
    content = edit.content if edit.content not in (None, proposed.content) else None
    tags = None
    if edit.tags is not None and sorted(t for t in edit.tags if t not in KEPT_TAGS) != sorted(proposed.tags):
        tags = [*proposed.kept_tags, *(t for t in edit.tags if t not in KEPT_TAGS)]
    edited = [k for k, v in (("title", title), ("content", content), ("tags", tags)) if v is not None]
    return title, content, tags, edited


def _apply(row: ProposalRow, now: datetime, edit: ResultEdit | None = None, decided_by: str = "") -> dict:
    try:
        p = payload_load(row.kind, row.payload)
    except ValidationError:
        raise
    except ValueError as exc:
        raise ValidationFailed(str(exc)) from None
    title = content = tags = None
    edited: list[str] = []
    if edit is not None:
        title, content, tags, edited = _edited(row, edit)
    note = {"edited": edited, "edited_by": decided_by} if edited else {}
    match p:
        case MergePayload():
            merged = node_merge(keep_ref=p.keep_id, discard_ref=p.discard_id, merged_title=title or p.merged_title,
                                merged_content=content or p.merged_content, tags=tags, reason=row.reason,
                                proposal_id=row.proposal_id, detail=note or None, now=now)
            return {"merge_id": merged.merge_id, "kept": merged.kept.id, "removed": merged.removed_id, **note}
        case EdgePayload():
            edge_create(source_ref=p.source_id, target_ref=p.target_id, edge=EdgeType(p.edge), weight=p.weight,
                        reason=p.edge_reason)
            audit_note_many(operation="connect", now=now, entries=[(p.source_id, {
                "target": p.target_id, "edge": p.edge, "weight": p.weight, "proposal": row.proposal_id})])
            return {"edge": p.edge, "source": p.source_id, "target": p.target_id}
        case DecayPayload():
            node_set_tier(ref=p.node_id, tier=Tier(p.tier), now=now)
            return {"tier": p.tier}
        case ConsolidationPayload():
            reason = f"{row.reason} (edited before approval: {', '.join(edited)})" if edited else row.reason
            node = nodes_consolidate(source_refs=p.node_ids, title=title or p.title, content=content or p.content,
                                     type=NodeType(p.type or "concept"), reason=reason, now=now,
                                     tags=[t for t in tags or [] if t not in KEPT_TAGS] or None)
            return {"node_id": node.id, **note}
