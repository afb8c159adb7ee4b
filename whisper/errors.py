"""Whisper's errors: subclasses of the one OrmahError hierarchy (mapped to HTTP by the API in one place)."""

from __future__ import annotations

from memory.errors import OrmahError


class WhisperLogNotFound(OrmahError):
    """No whisper decision with that whisper_log_id (it may have been pruned by retention)."""

    code = "not_found"
    http_status = 404


class TranscriptUnreadable(OrmahError):
    """The transcript path is not a readable .jsonl file."""

    code = "validation_failed"
    http_status = 422
