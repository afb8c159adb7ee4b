"""Intent classification."""

from __future__ import annotations

from whisper.classifier import CONTINUATION, CONVERSATIONAL, classify
from whisper.conf import WhisperConf
from whisper.state import SILENT_CONVERSATIONAL, Deps, WhisperRun
from whisper.text import looks_like_follow_up


def classify_intent(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Embed the prompt and classify it; a purely conversational prompt ends in silence. Within a session, a
    prompt is a follow-up when it reads like a continuation (archetypes) or leans on the previous one (opener or
    pronoun, text.looks_like_follow_up)."""
    run.prompt_vec = deps.embed(run.prompt)
    run.intent = classify(run.prompt_vec, deps.archetypes(), threshold=conf.intent_threshold)
    if run.intent.only == CONVERSATIONAL:
        return SILENT_CONVERSATIONAL
    run.follow_up = bool(run.recent) and (run.intent.has(CONTINUATION) or looks_like_follow_up(run.prompt))
    return None

