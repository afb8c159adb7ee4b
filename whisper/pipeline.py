"""The whisper pipeline: the stages in order, run over one WhisperRun. Pure orchestration; I/O comes via Deps."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime

from whisper.conf import WhisperConf
from whisper.stages.early import early_exit
from whisper.stages.focus import focus_check
from whisper.stages.gate import already_served, arrange, exploration, injection_gate
from whisper.stages.intent import classify_intent
from whisper.stages.render import render_text
from whisper.stages.retrieve import build_query, retrieve, score_floor
from whisper.stages.scoring import boost, identity_space, rerank, topical_overlap
from whisper.state import INJECTED, Deps, RecentPrompt, WhisperRequest, WhisperRun
from whisper.text import slash_command_text

logger = logging.getLogger(__name__)

Stage = Callable[[WhisperRun, WhisperConf, Deps], "str | None"]

STAGES: tuple[Stage, ...] = (
    early_exit,        # empty, short, machine-generated, acknowledgement
    classify_intent,   # conversational-only -> silence
    build_query,       # follow-up enrichment, recap detection
    retrieve,          # hybrid recall (+ identity memories)
    score_floor,       # minimum score
    rerank,            # cross-encoder, when one is configured
    boost,             # affinity from feedback (+ post-rerank floor)
    identity_space,    # identity-only prompts prefer global memories
    topical_overlap,   # fail-closed token overlap
    injection_gate,    # absolute gate
    focus_check,       # a memory holding nothing of what the question asks about -> dropped
    already_served,    # memories this session already got -> dropped (all of them: silence)
    exploration,       # optional exploration slot
    arrange,           # order and cap
    render_text,       # flat markdown under the token budget
)


def new_run(request: WhisperRequest, *, now: datetime, budget_tokens: int,
            recent: Sequence[RecentPrompt] | None) -> WhisperRun:
    """The initial state for a request. A slash command's arguments stand for the prompt (text.slash_command_text):
    the ledger keeps what came in, the stages read what the person typed."""
    typed = slash_command_text(request.prompt)
    if typed is not None:
        request = replace(request, prompt=typed)
    return WhisperRun(request=request, now=now, budget_tokens=budget_tokens,
                      recent=list(recent) if recent else None)


def run_stages(run: WhisperRun, conf: WhisperConf, deps: Deps,
               stages: Sequence[Stage] = STAGES) -> str:
    """Run the stages until one decides; returns the decision ("injected" when every stage let it through)."""
    for stage in stages:
        decision = stage(run, conf, deps)
        if decision is not None:
            logger.debug("whisper: %s at %s", decision, stage.__name__)
            return decision
    return INJECTED
