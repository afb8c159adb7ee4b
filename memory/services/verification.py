"""Verification records: the outcome of checking a memory (a test run, a linter, a person), kept as a ledger.

Ledger, not derived (docs/trust.md, "Verification records"): a check is an observation about the world at one
moment, not content of the memory, so it lives in its own table beside the other ledgers and is never rebuilt.
The latest record per memory counts; a non-passed one becomes a verification warning in context packs.
"""

from __future__ import annotations

from datetime import datetime

from memory.domain.node import as_utc, utcnow
from memory.domain.trust_requests import VerificationIn
from memory.models import VerificationRow
from memory.selectors import node_row_get


def verification_record(*, request: VerificationIn, now: datetime | None = None) -> VerificationRow:
    """Record one check of a memory (id or unique prefix). Raises NodeNotFound, AmbiguousNodeRef."""
    target = node_row_get(ref=request.target_id).uid
    return VerificationRow.objects.create(
        target_uid=target, status=request.status.value, checker=request.checker, message=request.message,
        detail=request.detail, evidence_event_id=request.evidence_event_id, created=as_utc(now or utcnow()),
    )


def verification_prune(*, before: datetime, keep_latest: bool = True) -> int:
    """Delete records older than `before` (by default never a memory's latest one); returns how many went."""
    old = VerificationRow.objects.filter(created__lt=before)
    if keep_latest:
        latest = {}
        for row_id, uid in VerificationRow.objects.order_by("target_uid", "-created", "-id").values_list(
                "id", "target_uid"):
            latest.setdefault(uid, row_id)
        old = old.exclude(id__in=list(latest.values()))
    return old.delete()[0]
