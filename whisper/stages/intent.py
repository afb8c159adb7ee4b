"""Intent classification and the topic-repeat skip."""

from __future__ import annotations

import numpy as np

from whisper.classifier import CONTINUATION, CONVERSATIONAL, classify
from whisper.conf import WhisperConf
from whisper.state import SILENT_CONVERSATIONAL, SILENT_TOPIC_REPEAT, Deps, WhisperRun
from whisper.text import looks_like_follow_up

CENTROID_PROMPTS = 3


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


def topic_repeat(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Silence when a non-follow-up stays on the session's recent topic and that topic was already served."""
    if not run.recent or run.follow_up or run.prompt_vec is None:
        return None
    recent = [r.vector for r in run.recent[-CENTROID_PROMPTS:] if r.vector is not None]
    if not recent:
        return None
    centroid = np.mean(np.stack(recent), axis=0)
    norm = float(np.linalg.norm(centroid))
    if norm == 0.0:
        return None
    similarity = float(np.dot(run.prompt_vec, centroid / norm))
    if similarity > conf.topic_repeat_threshold and deps.topic_served(run.prompt_vec):
        return SILENT_TOPIC_REPEAT
    return None
