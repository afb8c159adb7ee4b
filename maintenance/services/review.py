"""Undo of a review decision: a decided proposal goes back to pending (its changes reverted by the caller)."""

from __future__ import annotations

from maintenance.errors import ProposalNotFound
from maintenance.models import ProposalRow
from memory.errors import Conflict

REOPENABLE = ("approved", "rejected")


def proposal_reopen(*, proposal_id: str) -> ProposalRow:
    """Put an approved or rejected proposal back in the queue, as it was before the decision.

    The caller reverts what approving it changed first (the UI's undo does). Raises ProposalNotFound, Conflict
    (the proposal is pending or expired, or another pending proposal now holds its key).
    """
    row = ProposalRow.objects.filter(proposal_id=proposal_id).first()
    if row is None:
        raise ProposalNotFound(f"No proposal {proposal_id}")
    if row.status not in REOPENABLE:
        raise Conflict(f"Proposal {proposal_id} is {row.status}; only a decided proposal can be reopened")
    if ProposalRow.objects.filter(status="pending", key=row.key).exclude(pk=row.pk).exists():
        raise Conflict(f"A newer proposal about the same memories is already waiting; proposal {proposal_id} "
                       "stays decided")
    ProposalRow.objects.filter(pk=row.pk).update(status="pending", decided_at=None, decided_by="", result={})
    row.refresh_from_db()
    return row
