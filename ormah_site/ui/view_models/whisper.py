"""The whisper screen's view-models: recent decisions with every candidate, the feedback given, warnings now.

Built on whisper.selectors and memory's warnings; everything returned is evaluated (dataclasses and lists), so the
template never queries while it renders.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.context.warnings import memory_warnings
from ormah_site.ui.view_models.pills import Pill, pill
from whisper.selectors import candidates_by_decision, decision_counts, decision_get, decisions_page, explicit_feedback
from whisper.state import INJECTED

PROMPT_PREVIEW = 280


@dataclass(frozen=True)
class CandidateView:
    node_uid: str
    short_id: str
    title: str
    source: str
    stage: str
    injected: bool
    retrieval_rank: int | None
    retrieval_score: float
    raw_cosine: float | None
    ce_abs: float | None
    affinity: float
    gate_score: float | None
    gate_threshold: float | None
    final_rank: int | None
    feedback: int | None  # the latest explicit signal given in this decision's context, if any
    warnings: tuple[Pill, ...] = ()  # the memory's recall warnings now (superseded, contradicted, ...)


@dataclass(frozen=True)
class DecisionView:
    id: int
    created: datetime
    session_id: str | None
    space: str | None
    prompt: str
    prompt_preview: str
    intent: str
    decision: str
    injected: bool
    estimated_tokens: int
    budget_tokens: int
    gate: float | None
    reranker: str
    elapsed_ms: float | None
    delivered: bool | None
    candidates: list[CandidateView]

    @property
    def injected_candidates(self) -> list[CandidateView]:
        return [c for c in self.candidates if c.injected]

    @property
    def gated_out(self) -> list[CandidateView]:
        return [c for c in self.candidates if not c.injected]


def _candidate(c, feedback: dict[tuple[int, str], int],
               warnings: dict[str, tuple[Pill, ...]]) -> CandidateView:
    return CandidateView(
        node_uid=c.node_uid, short_id=c.short_id, title=c.title, source=c.source, stage=c.stage, injected=c.injected,
        retrieval_rank=c.retrieval_rank, retrieval_score=c.retrieval_score, raw_cosine=c.raw_cosine, ce_abs=c.ce_abs,
        affinity=c.affinity, gate_score=c.gate_score, gate_threshold=c.gate_threshold, final_rank=c.final_rank,
        feedback=feedback.get((c.decision_id, c.node_uid)), warnings=warnings.get(c.node_uid, ()),
    )


def _view(d, candidates: list,
          feedback: dict[tuple[int, str], int], warnings: dict[str, tuple[Pill, ...]]) -> DecisionView:
    prompt = d.prompt or ""
    preview = prompt if len(prompt) <= PROMPT_PREVIEW else prompt[: PROMPT_PREVIEW - 1].rstrip() + "…"
    ordered = sorted(candidates, key=lambda c: (not c.injected, c.final_rank if c.final_rank is not None else 999,
                                                c.retrieval_rank if c.retrieval_rank is not None else 999, c.id))
    return DecisionView(
        id=d.id, created=d.created, session_id=d.session_id, space=d.space, prompt=prompt, prompt_preview=preview,
        intent=d.intent, decision=d.decision, injected=d.decision == INJECTED, estimated_tokens=d.estimated_tokens,
        budget_tokens=d.budget_tokens, gate=d.gate, reranker=d.reranker, elapsed_ms=d.elapsed_ms,
        delivered=d.delivered, candidates=[_candidate(c, feedback, warnings) for c in ordered],
    )


def _warnings(uids: list[str]) -> dict[str, tuple[Pill, ...]]:
    """Each memory's recall warnings as it stands now, as display lines."""
    if not uids:
        return {}
    return {uid: tuple(pill(w) for w in found)
            for uid, found in memory_warnings(uids=list(dict.fromkeys(uids))).items() if found}


def decisions_recent(*, outcome: str = "all", session_id: str | None = None, limit: int = 50,
                     before_id: int | None = None) -> list[DecisionView]:
    """The newest decisions (all, "injected" or "silent"), each with its candidates and the feedback given."""
    rows = decisions_page(outcome=outcome, session_id=session_id, limit=limit, before_id=before_id)
    ids = [r.id for r in rows]
    by_decision = candidates_by_decision(decision_ids=ids)
    feedback = explicit_feedback(decision_ids=ids)
    warnings = _warnings([c.node_uid for cs in by_decision.values() for c in cs])
    return [_view(r, by_decision[r.id], feedback, warnings) for r in rows]


def decision_one(*, decision_id: int) -> DecisionView | None:
    """One decision with its candidates, or None."""
    row = decision_get(whisper_log_id=decision_id)
    if row is None:
        return None
    candidates = candidates_by_decision(decision_ids=[row.id])[row.id]
    return _view(row, candidates, explicit_feedback(decision_ids=[row.id]),
                 _warnings([c.node_uid for c in candidates]))


def decision_outcomes(*, since: datetime | None = None) -> list[tuple[str, int]]:
    """How often each outcome was decided (most frequent first; pending decisions left out)."""
    counts = decision_counts(since=since)
    return sorted(((k, n) for k, n in counts.items() if k != "pending"), key=lambda kv: (-kv[1], kv[0]))
