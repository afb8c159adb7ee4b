"""The last stage: the flat markdown under the token budget, with the maintenance_due line when it is due."""

from __future__ import annotations

from whisper.conf import WhisperConf
from whisper.formatter import render
from whisper.state import SILENT_BUDGET, STAGE_BUDGET, STAGE_EXPLORATION, STAGE_INJECTED, Deps, WhisperRun


def render_text(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Format the selected memories; those the budget cannot hold stop at `budget`.

    Recall warnings are computed here, for the few memories about to be shown, not for every candidate.
    """
    warned = {h.node_id: h for h in deps.warnings([c.hit for c in run.pool if c.hit is not None])}
    for cand in run.pool:
        if cand.hit is not None and cand.hit.node_id in warned:
            cand.hit = warned[cand.hit.node_id]
    rendered = render(run.pool, budget_tokens=run.budget_tokens, content_max_chars=conf.content_max_chars,
                      full_items=conf.full_items, whisper_log_id=run.log_id, maintenance_due=deps.maintenance_due())
    included = set(rendered.node_ids)
    run.selected = [c for c in run.pool if c.node_id in included]
    run.drop(run.selected, STAGE_BUDGET)
    for rank, cand in enumerate(run.selected, 1):
        cand.final_rank = rank
        cand.stage = STAGE_EXPLORATION if cand.exploration else STAGE_INJECTED
    run.text, run.estimated_tokens = rendered.text, rendered.estimated_tokens
    return None if run.selected else SILENT_BUDGET
