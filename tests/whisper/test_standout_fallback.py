"""A standout is a fallback (session 24, silence2; docs/whisper.md, "Standouts on first-person prompts"): an identity
memory that stands out for a task or a first-person prompt joins only when the injection gate passed nothing. Beside
a memory the gate passed it was mostly wrong on dev 1-14 (`python -m bench.whisper_silence table`). The store is
tests/whisper/test_conventions.py's person (13 identity memories) plus three project notes written for this test;
the real MiniLM model. On the code before (checked by hand) the first prompt injected the CI note and the shell
convention beside it."""

from __future__ import annotations

import pytest

from tests.whisper.conftest import SMALL_STORE_WEIGHTS
from tests.whisper.test_conventions import person  # noqa: F401  (the fixture)
from whisper.conf import WhisperConf
from whisper.models import WhisperCandidateRow
from whisper.services import whisper_respond

NOTES = {
    "release": ("Release checklist", "To cut a release of the library: bump the version in pyproject.toml, add the "
                "changes to CHANGELOG.md, tag vX.Y.Z and push the tag; CI publishes the wheel to PyPI."),
    "ci": ("CI pipeline", "CI runs on GitHub Actions: ruff, mypy and the pytest suite on Python 3.11 and 3.12; the "
           "integration tests need the docker service."),
    "deps": ("Dependencies", "The project's dependencies are pinned in poetry.lock; lxml is pinned below 6 because "
             "of the parser regression."),
}


@pytest.fixture
def store(person, mem):  # noqa: F811
    notes = {key: mem(content, title=title, type="fact", auto_link=False) for key, (title, content) in NOTES.items()}
    return {**person, **notes}


def test_no_standout_beside_a_memory_the_gate_passed(store, settings):
    # The shell convention stands out for the task (it did join before), but the gate passed the CI note. At the gate
    # this was written for (sessions 18-23's weights at 0.33): session 24's refitted gate (-0.40) passes the shell
    # convention itself (gate9; tests/whisper/conftest.py SMALL_STORE_WEIGHTS).
    settings.ORMAH = {**settings.ORMAH, "WHISPER_GATE_WEIGHTS": SMALL_STORE_WEIGHTS, "WHISPER_GATE_LOGIT": 0.33}
    result = whisper_respond(prompt="give me a zsh snippet that runs the CI pipeline's pytest suite locally",
                             session_id="fallback")
    assert result.node_ids == (store["ci"].id,)
    row = WhisperCandidateRow.objects.get(decision_id=result.whisper_log_id, node_uid=store["shell"].id)
    assert row.gate_threshold != WhisperConf().standout_z  # judged by its own gate, not passed on its standout


@pytest.mark.parametrize(("prompt", "key"), [
    ("spin up a venv and install the deps", "env"),  # a task the gate passes nothing for
    ("a courier form asks for my home address, fill it in", "home"),  # a first-person prompt
])
def test_a_standout_still_passes_when_the_gate_passed_nothing(store, prompt, key):
    result = whisper_respond(prompt=prompt, session_id="fallback-alone")
    assert result.node_ids == (store[key].id,)
    row = WhisperCandidateRow.objects.get(decision_id=result.whisper_log_id, node_uid=store[key].id)
    assert row.gate_threshold == WhisperConf().standout_z <= row.gate_score
