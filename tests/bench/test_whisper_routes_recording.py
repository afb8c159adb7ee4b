"""bench.whisper_routes' recording on a real store (tests/whisper/test_conventions.py's person, the real MiniLM model):
a memory the logistic gate passed that also stands out keeps the gate's route (its ledger row shows its standout
score against standout_z); only one the standout alone let through is the standout's. Before session 24 both were
counted as the standout's (this test fails there: checked by hand)."""

from __future__ import annotations

from bench.whisper_routes import recording_routes
from tests.whisper.test_conventions import person  # noqa: F401  (the fixture)
from whisper.conf import WhisperConf
from whisper.services import whisper_respond


def _passed(person, prompt):  # noqa: F811
    keys = {node.id: key for key, node in person.items()}
    with recording_routes(keys) as calls:
        whisper_respond(prompt=prompt, session_id="routes")
    return {row["key"]: row for row in calls[-1]["rows"] if row["passed"]}


def test_a_memory_the_gate_passed_keeps_its_route_when_it_also_stands_out(person):  # noqa: F811
    row = _passed(person, "install the dependencies with poetry, not pip")["env"]
    assert row["threshold"] == WhisperConf().standout_z  # it stands out ...
    assert row["route"] == "logistic"  # ... but the gate passed it first


def test_a_memory_only_the_standout_passed_is_the_standouts(person):  # noqa: F811
    assert _passed(person, "spin up a venv and install the deps")["env"]["route"] == "standout"
