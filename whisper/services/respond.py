"""whisper_respond: one prompt in, a decision (and maybe text) out, with its ledger rows and the session buffer."""

from __future__ import annotations

import hashlib
import importlib
import logging
import time
from datetime import datetime, timedelta

import numpy as np
from django.db import transaction

from memory import runtime
from memory.conf import get_conf as memory_conf
from memory.context.warnings import hits_with_warnings
from memory.domain.node import as_utc, utcnow
from memory.index_insert import insert_rows
from memory.ranking.scorer import pinned_for
from memory.search import recall, shared_pools
from memory.services.surfacing import surfacing_log
from whisper import selectors
from whisper.classifier import archetype_matrices
from whisper.conf import WhisperConf, get_conf
from whisper.formatter import intro
from whisper.models import AffinityRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.pipeline import new_run, run_stages
from whisper.reranker import load_reranker
from whisper.session import buffer_append, buffer_read
from whisper.state import (
    INJECTED, SILENT_ACK, SILENT_DISABLED, SILENT_EMPTY, SILENT_ERROR, SILENT_LATE, SILENT_SHORT, SILENT_SYNTHETIC,
    Deps, WhisperRequest, WhisperResult, WhisperRun,
)
from whisper.text import estimate_tokens

logger = logging.getLogger(__name__)

MAX_STORED_PROMPT = 4000
MAX_PATTERN = 200  # WhisperDecisionRow.matched_pattern: a varchar(200) on PostgreSQL
MAX_BUDGET_TOKENS = 4000
PRUNE_EVERY = 500
AFFINITY_RETENTION_DAYS = 365  # a year-old signal weighs 2^-12 of a fresh one
NOT_BUFFERED = (SILENT_EMPTY, SILENT_SHORT, SILENT_SYNTHETIC, SILENT_ACK, SILENT_DISABLED)  # no topic in them
NUDGE = ("Remember to use ormah's remember tool to store decisions, preferences or noteworthy facts from this "
         "conversation.")


class _ReusingEmbedder:
    """The real embedder, remembering the query vectors of this call so recall does not embed them again."""

    def __init__(self, embedder) -> None:
        self._embedder, self._vectors = embedder, {}
        self.model_id, self.dim = embedder.model_id, embedder.dim

    def embed_query(self, text: str) -> np.ndarray:
        if text not in self._vectors:
            self._vectors[text] = np.asarray(self._embedder.embed_query(text), dtype=np.float32)
        return self._vectors[text]

    def embed_documents(self, texts):
        return self._embedder.embed_documents(texts)


def _maintenance_due(dotted: str | None):
    """The configured `() -> bool` telling whether maintenance is due (composed in settings; default: never)."""
    if not dotted:
        return lambda: False
    module, _, name = dotted.rpartition(".")
    check = getattr(importlib.import_module(module), name)

    def due() -> bool:
        try:
            return bool(check())
        except Exception:  # noqa: BLE001
            # Trigger: the check failed. Why: an optional line must not cost the whisper. Outcome: logged, no line.
            logger.exception("maintenance_due check %s failed", dotted)
            return False

    return due


def _recall_pinned(query, now: datetime, embedder):
    """recall with the scorer file whisper's gate was fitted on (memory.ranking.scorer.PINNED)."""
    with pinned_for("whisper"):
        return recall(query=query, now=now, embedder=embedder, warnings=False)


def whisper_deps(*, conf: WhisperConf, session_id: str | None, now: datetime, embedder=None) -> Deps:
    """The real collaborators of the stages: the embedder, recall, the index, the ledger."""
    mconf = memory_conf()  # built once for both
    emb = _ReusingEmbedder(embedder or runtime.embedder(mconf))
    cache_dir = str(mconf.model_cache_dir)
    return Deps(
        embed=emb.embed_query,
        archetypes=lambda: archetype_matrices(emb),
        search=lambda query: _recall_pinned(query, now, emb),
        cosines=lambda vec, row_ids: selectors.node_cosines(query_vec=vec, row_ids=row_ids),
        identity=lambda: selectors.identity_hits(now=now),
        feedback=lambda uids: selectors.feedback_samples(node_uids=uids),
        served=lambda: selectors.served_node_ids(
            session_id=session_id, since=now - timedelta(minutes=conf.session_gap_minutes)),
        self_ids=selectors.self_ids,
        spaces=selectors.known_spaces,
        maintenance_due=_maintenance_due(conf.maintenance_due),
        reranker=load_reranker(conf.reranker, model_name=conf.reranker_model, cache_dir=cache_dir),
        warnings=lambda hits: hits_with_warnings(hits, now=now),
        idf=selectors.term_idf,
        spread=lambda vec: selectors.cosine_spread(query_vec=vec, now=now),
    )


def _blob(vector: np.ndarray | None) -> bytes | None:
    return None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()


def _decision_row(request: WhisperRequest, run: WhisperRun | None, decision: str, elapsed_ms: float,
                  reranker: str) -> WhisperDecisionRow:
    """The decision row of a call (not saved yet)."""
    injected = decision == INJECTED
    prompt = request.prompt
    row = WhisperDecisionRow(
        created=request.now, session_id=request.session_id, space=request.space, prompt=prompt[:MAX_STORED_PROMPT],
        prompt_hash=hashlib.sha256(prompt.encode("utf-8", "replace")).hexdigest(), decision=decision,
        budget_tokens=request.budget_tokens or 0, reranker=reranker, elapsed_ms=round(elapsed_ms, 2),
    )
    if run is not None:
        row.intent = run.intent.label if run.intent is not None else ""
        row.prompt_vec = _blob(run.prompt_vec)
        row.matched_pattern = run.matched_pattern and run.matched_pattern[:MAX_PATTERN]  # a configured regex: longer
        row.gate = run.gate
        row.node_ids = [c.node_id for c in run.selected] if injected else []
        row.estimated_tokens = run.estimated_tokens if injected else 0
    return row


def _with_log_id(run: WhisperRun, log_id: int) -> None:
    """Put the decision's real id in the text rendered with the expected one (`run.log_id`).

    The id is known only once the row is inserted (with the rest of the call's rows, at the end). The text was
    rendered with the id the next row was expected to get; another writer may have taken it meanwhile. An id of the
    same width keeps the text's length and words, so its estimate and the budget hold; a wider or narrower one
    (the ids crossed a power of ten) leaves the reference out, which only shortens the text.
    """
    if run.log_id == log_id or not run.text:
        run.log_id = log_id
        return
    same_width = run.log_id is not None and len(str(run.log_id)) == len(str(log_id))
    run.text = run.text.replace(intro(run.log_id), intro(log_id if same_width else None), 1)
    run.estimated_tokens = estimate_tokens(run.text)
    run.log_id = log_id


def _record(request: WhisperRequest, run: WhisperRun | None, decision: str, elapsed_ms: float,
            conf: WhisperConf) -> WhisperDecisionRow:
    """Write everything a call leaves behind in ONE write transaction, after the pipeline: the decision row, one
    candidate row per candidate seen, the surfacing row of an injection and the session buffer.

    One transaction, not one per row: under SQLite's single write lock each acquisition can wait behind another
    writer's transaction (a group of remembers), so a call waits at most once, and never before its answer is made.
    """
    injected = decision == INJECTED
    row = _decision_row(request, run, decision, elapsed_ms, conf.reranker or "")
    with transaction.atomic():
        insert_rows(WhisperDecisionRow, [row])  # the row `save` inserts, without the query compiler (issue 13)
        if injected and run is not None:
            expected = run.estimated_tokens
            _with_log_id(run, row.id)
            if run.estimated_tokens != expected:  # the reference left out (rare): the row says what was sent
                row.estimated_tokens = run.estimated_tokens
                row.save(update_fields=["estimated_tokens"])
        if run is not None and run.candidates:
            insert_rows(WhisperCandidateRow, [WhisperCandidateRow(
                decision_id=row.id, node_uid=c.node_id, short_id=c.short_id, title=c.display_title[:300], source=c.source,
                retrieval_rank=c.retrieval_rank, retrieval_score=c.retrieval_score, raw_cosine=c.raw_cosine,
                ce_raw=c.ce_raw, ce_abs=c.ce_abs, affinity=c.affinity, gate_score=c.gate_score,
                gate_threshold=c.gate_threshold, stage=c.stage,
                final_rank=c.final_rank, injected=injected and c.final_rank is not None,
            ) for c in run.candidates])
        if injected and run is not None:
            surfacing_log(surface="whisper", query=run.query or run.prompt, session_id=row.session_id,
                          space=row.space, now=row.created, hits=[c.hit for c in run.selected if c.hit is not None])
        if decision not in NOT_BUFFERED:
            buffer_append(session_id=request.session_id, prompt=run.prompt if run is not None else request.prompt,
                          vector=run.prompt_vec if run is not None else None, now=request.now, conf=conf)
    return row


def whisper_respond(*, prompt: str, session_id: str | None = None, space: str | None = None,
                    budget_tokens: int | None = None, now: datetime | None = None, timeout_ms: float | None = None,
                    embedder=None) -> WhisperResult:
    """Decide whether to whisper memories for a prompt; always writes one decision row.

    Never raises for a failing stage: the failure is logged and the answer is silence (`silent:error`).
    An answer that took longer than the caller's `timeout_ms` is recorded as `silent:late` and not returned,
    since the caller has already given up on it. The pipeline only reads; what the call leaves behind is written
    at the end in one transaction (`_record`).
    """
    started = time.perf_counter()
    conf = get_conf()
    now = as_utc(now or utcnow())
    session_id = (session_id or "").strip()[:200] or None
    budget = max(0, min(int(budget_tokens if budget_tokens is not None else conf.budget_tokens), MAX_BUDGET_TOKENS))
    request = WhisperRequest(prompt=prompt or "", session_id=session_id, space=space, budget_tokens=budget, now=now)
    run: WhisperRun | None = None
    prompts_before = 0
    try:
        # one read: the id the decision row is expected to get and the session's prompts before this one
        expected_id, prompts_before = selectors.ledger_position(session_id=session_id)
        if not conf.enabled:
            decision = SILENT_DISABLED
        else:
            recent = buffer_read(session_id=session_id, now=now, conf=conf)
            run = new_run(request, now=now, budget_tokens=budget, recent=recent)
            run.log_id = expected_id  # the text names it; _record puts in the real one
            with shared_pools():  # a query asked again with no project preferred gathers its pool once
                decision = run_stages(run, conf, whisper_deps(conf=conf, session_id=session_id, now=now,
                                                               embedder=embedder))
    except Exception:  # noqa: BLE001
        # Trigger: any failure inside a stage. Why: whisper must never block or break the agent's prompt.
        # Outcome: logged with its stack; the call answers silence and the ledger says silent:error.
        logger.exception("Whisper failed for a prompt of session %s", session_id)
        decision = SILENT_ERROR
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    if decision == INJECTED and timeout_ms is not None and elapsed_ms > timeout_ms:
        logger.warning("Whisper took %.0f ms, over the caller's %.0f ms: not delivered", elapsed_ms, timeout_ms)
        decision = SILENT_LATE
    row = _record(request, run, decision, elapsed_ms, conf)
    if row.id % PRUNE_EVERY == 0:
        ledger_prune(now=now)
    # the session's prompts with this one (it is not synthetic), as counted before the call: one agent's calls
    # follow one another, so none of its own can land in between
    count = prompts_before + 1 if session_id and decision != SILENT_SYNTHETIC else 0
    injected = decision == INJECTED
    return WhisperResult(
        text=run.text if injected else "", node_ids=tuple(c.node_id for c in run.selected) if injected else (),
        estimated_tokens=run.estimated_tokens if injected else 0, decision=decision, whisper_log_id=row.id,
        intent=row.intent or None, elapsed_ms=round(elapsed_ms, 2),
        nudge=NUDGE if count and conf.nudge_interval and count % conf.nudge_interval == 0 else None,
        store_due=bool(count and conf.store_interval and count % conf.store_interval == 0),
        warnings=tuple(w for c in run.selected if c.hit is not None for w in c.hit.warnings) if injected else (),
    )


def whisper_delivered(*, whisper_log_id: int) -> bool:
    """Record that the hook handed a whisper to the agent; False when there is no such injected decision."""
    return bool(WhisperDecisionRow.objects.filter(id=whisper_log_id, decision=INJECTED).update(delivered=True))


def ledger_prune(*, now: datetime | None = None, days: int | None = None, batch: int = 1000) -> int:
    """Delete decision rows (and their candidates) older than the retention, and year-old feedback rows.

    Returns how many decisions went. Feedback rows keep their prompt vectors, so affinity survives its decisions.
    """
    now = as_utc(now or utcnow())
    cutoff = now - timedelta(days=days if days is not None else get_conf().log_retention_days)
    AffinityRow.objects.filter(created__lt=now - timedelta(days=AFFINITY_RETENTION_DAYS)).delete()
    total = 0
    while True:
        ids = list(WhisperDecisionRow.objects.filter(created__lt=cutoff).values_list("id", flat=True)[:batch])
        if not ids:
            return total
        with transaction.atomic():
            WhisperDecisionRow.objects.filter(id__in=ids).delete()
        total += len(ids)
