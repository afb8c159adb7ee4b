"""The injection gate on absolute signals, the optional exploration slot, ordering and the cap."""

from __future__ import annotations

from whisper.affinity import has_similar
from whisper.conf import WhisperConf
from whisper.state import (
    SILENT_BELOW_GATE, SILENT_TOPIC_REPEAT, STAGE_CAP, STAGE_GATE, STAGE_SERVED, Candidate, Deps, WhisperRun,
)

EXPLORATION_MIN_CE_RAW = -8.0


def gate_score(cand: Candidate) -> float:
    """g = (cross-encoder absolute, else raw cosine) × (0.4 + 0.6·confidence) × space factor + affinity.

    A candidate with neither signal falls back to its blended score. The blended score orders; g decides.
    """
    base = cand.ce_abs if cand.ce_abs is not None else cand.raw_cosine
    if base is None:
        return round(cand.score, 4)
    return round(base * (0.4 + 0.6 * cand.confidence) * cand.space_factor + cand.affinity, 4)


def threshold_for(cand: Candidate, run: WhisperRun, conf: WhisperConf) -> float:
    """The gate a candidate must reach.

    Memories the self node defines, on a prompt about the user that shares a distinctive word with them, face the
    lower identity gate (cosine): "what's my name?" is far from "The user's name is …" in embedding space.
    """
    if cand.identity and run.about_user and cand.overlap and cand.ce_abs is None:
        return conf.identity_gate
    return conf.gate if run.reranked else conf.gate_no_reranker


def injection_gate(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Keep candidates whose gate score reaches their gate; silence when none does. Recaps of a period skip it."""
    run.gate = conf.gate if run.reranked else conf.gate_no_reranker
    for cand in run.pool:
        cand.gate_score = gate_score(cand)
        cand.gate_threshold = None if run.broad_recap else threshold_for(cand, run, conf)
    if run.broad_recap:
        return None
    run.drop([c for c in run.pool if c.gate_score >= c.gate_threshold], STAGE_GATE)
    return None if run.pool else SILENT_BELOW_GATE


def already_served(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Drop memories this session was whispered within the gap (still in the agent's context); silence if none left."""
    if not run.pool or not run.request.session_id:
        return None
    served = deps.served()
    if served:
        run.drop([c for c in run.pool if c.node_id not in served], STAGE_SERVED)
    return None if run.pool else SILENT_TOPIC_REPEAT


def exploration(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Optionally add one gated-out candidate, marked [exploring], to learn from feedback (never on silence)."""
    if not conf.exploration or run.broad_recap or not run.pool or run.prompt_vec is None:
        return None
    rejected = sorted((c for c in run.candidates if c.stage == STAGE_GATE), key=lambda c: -c.score)
    if not rejected:
        return None
    samples = deps.feedback([c.node_id for c in rejected])
    for cand in rejected:
        if cand.ce_raw is not None and cand.ce_raw < EXPLORATION_MIN_CE_RAW:
            continue
        if has_similar(run.prompt_vec, samples.get(cand.node_id, ()), similarity=conf.affinity_similarity):
            continue
        cand.exploration = True
        run.pool.append(cand)
        return None
    return None


def arrange(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Order by score (recaps: space priority, then newest first), exploration last; cap at max_nodes."""
    main = [c for c in run.pool if not c.exploration]
    extra = [c for c in run.pool if c.exploration]
    if run.broad_recap:
        main.sort(key=lambda c: (c.space_factor, c.created), reverse=True)
    else:
        main.sort(key=lambda c: -c.score)
    ordered = main + extra
    run.drop(ordered[: conf.max_nodes], STAGE_CAP)
    run.pool = ordered[: conf.max_nodes]
    return None
