"""Feedback on a memory in a prompt context: feeds affinity, and a +1 counts as confirmed use (at most once)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction

from memory.domain.node import as_utc, utcnow
from memory.errors import ValidationFailed
from memory.selectors import node_row_resolve
from memory.services.lifecycle import node_confirm_use
from whisper import selectors
from whisper.affinity import EXPLICIT, IMPLICIT
from whisper.errors import WhisperLogNotFound
from whisper.models import AffinityRow, WhisperCandidateRow

logger = logging.getLogger(__name__)

SOURCES = (EXPLICIT, IMPLICIT)


@dataclass(frozen=True, slots=True)
class FeedbackResult:
    node_id: str
    signal: int
    source: str
    whisper_log_id: int | None
    affinity_recorded: bool  # False when no prompt context is known (no whisper decision to attach it to)
    use_confirmed: bool  # True when this call counted as confirmed use (+1, first time for that injection)
    merged_from: str | None = None  # the id given, when a duplicate merge had moved that memory into node_id


def feedback_submit(*, node_ref: str, signal: int, source: str = EXPLICIT, whisper_log_id: int | None = None,
                    now: datetime | None = None) -> FeedbackResult:
    """Record feedback on a memory; the prompt context comes from `whisper_log_id` or the node's last injection.

    Negative feedback only lowers affinity; positive feedback also reinforces the memory through
    memory.services.lifecycle.node_confirm_use, once per (decision, memory).
    A memory a duplicate merge removed lands on its keeper (memory.selectors.node_row_resolve): the signal is
    about the content, which the keeper now holds. The whisper ledger still knows the id it handed out, so the
    prompt context and the once-per-injection claim come from that id's row.
    Raises ValidationFailed (signal, source), NodeNotFound / AmbiguousNodeRef (node_ref), WhisperLogNotFound.
    """
    if signal not in (1, -1):
        raise ValidationFailed("signal must be 1 or -1")
    if source not in SOURCES:
        raise ValidationFailed(f"source must be one of {', '.join(SOURCES)}")
    now = as_utc(now or utcnow())
    row, merged_from = node_row_resolve(ref=node_ref)
    decision = None
    if whisper_log_id is not None:
        decision = selectors.decision_get(whisper_log_id=whisper_log_id)
        if decision is None:
            raise WhisperLogNotFound(f"No whisper decision {whisper_log_id}")
    candidate = selectors.candidate_for_feedback(node_uid=merged_from or row.uid, whisper_log_id=whisper_log_id)
    if candidate is None and merged_from is not None:
        candidate = selectors.candidate_for_feedback(node_uid=row.uid, whisper_log_id=whisper_log_id)
    if decision is None and candidate is not None:
        decision = candidate.decision
    prompt_vec = decision.prompt_vec if decision is not None else None
    claimed = signal == 1
    with transaction.atomic():
        if prompt_vec is not None:
            AffinityRow.objects.create(node_uid=row.uid, prompt_vec=bytes(prompt_vec), signal=signal, source=source,
                                       created=now, decision=decision)
        if claimed and candidate is not None:
            claimed = bool(WhisperCandidateRow.objects.filter(id=candidate.id, use_confirmed=False)
                           .update(use_confirmed=True))
    if claimed:
        node_confirm_use(ref=row.uid, now=now, source=f"whisper_feedback:{source}")
    logger.info("Feedback %+d (%s) on %s%s, decision %s, use confirmed: %s", signal, source, row.short_id,
                f" (merged from {merged_from[:8]})" if merged_from else "", decision.id if decision else None, claimed)
    return FeedbackResult(node_id=row.uid, signal=signal, source=source,
                          whisper_log_id=decision.id if decision else None,
                          affinity_recorded=prompt_vec is not None, use_confirmed=claimed, merged_from=merged_from)
