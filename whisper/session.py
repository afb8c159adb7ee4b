"""The session buffer: the last prompts of a session (5 within 10 minutes by default), in a table every worker sees.

`buffer_read` returns None for the first prompt of a session, which is also what a session gets after a pause
longer than the gap: follow-up handling then treats the prompt as a fresh start.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import numpy as np
from django.db import transaction
from django.db.models import Q

from whisper.conf import WhisperConf
from whisper.models import SessionPromptRow
from whisper.state import RecentPrompt

MAX_PROMPT_CHARS = 2000


def _vector(blob) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(bytes(blob), dtype=np.float32)


def buffer_read(*, session_id: str | None, now: datetime, conf: WhisperConf) -> list[RecentPrompt] | None:
    """The session's recent prompts, oldest first, or None when there are none within the gap."""
    if not session_id:
        return None
    since = now - timedelta(minutes=conf.session_gap_minutes)
    rows = list(SessionPromptRow.objects.filter(session_id=session_id, created__gte=since, created__lte=now)
                .order_by("-created", "-id").values_list("prompt", "vector", "created")[: conf.buffer_size])
    if not rows:
        return None
    return [RecentPrompt(prompt=prompt, vector=_vector(vector), at=at) for prompt, vector, at in reversed(rows)]


def buffer_append(*, session_id: str | None, prompt: str, vector: np.ndarray | None, now: datetime,
                  conf: WhisperConf) -> None:
    """Add a prompt to its session, keeping at most `buffer_size` rows per session and none older than the gap."""
    if not session_id:
        return
    blob = None if vector is None else np.asarray(vector, dtype=np.float32).tobytes()
    since = now - timedelta(minutes=conf.session_gap_minutes)
    with transaction.atomic(savepoint=False):  # joins the caller's transaction (whisper's one write)
        SessionPromptRow.objects.create(session_id=session_id, prompt=prompt[:MAX_PROMPT_CHARS], vector=blob,
                                        created=now)
        newest = (SessionPromptRow.objects.filter(session_id=session_id).order_by("-created", "-id")
                  .values("id")[: conf.buffer_size])
        # one DELETE: every session's rows older than the gap, and this session's beyond the newest buffer_size
        stale = Q(created__lt=since) | (Q(session_id=session_id) & ~Q(id__in=newest))
        SessionPromptRow.objects.filter(stale).delete()
