"""bench.whisper_stores' gate recording: the store's shape (a full n x n similarity matrix) only with --shape."""

from __future__ import annotations

import pytest

from bench.whisper_stores import recording_gate
from whisper.services import whisper_respond


@pytest.mark.parametrize("shape", [False, True])
def test_the_store_shape_is_recorded_only_when_asked(mem, shape):
    mem("The staging database is backed up every night at 02:00 to the S3 bucket.", title="Backups", auto_link=False)
    mem("The API runs on port 8765 behind nginx.", title="API port", auto_link=False)
    with recording_gate({}, shape=shape) as calls:
        whisper_respond(prompt="when is the staging database backed up?", session_id="shape")
    rows = [r for call in calls if call for r in call]
    assert rows
    assert all((r["spread"] is not None, r["hub"] is not None) == (shape, shape) for r in rows)
