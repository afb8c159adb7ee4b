"""A process killed inside remember's one index transaction (the evidence rows are written with the memories' rows,
after the events and the memory's file are durable): nothing acknowledged is lost, and a restart's rebuild plus the
next remember index every event and every memory the files hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "support" / "remember_killed.py"


def _run(home: Path, mode: str) -> list[str]:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING"}
    env.pop("ORMAH_DB_PATH", None)
    done = subprocess.run([sys.executable, str(SCRIPT), mode], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == (9 if mode == "crash" else 0), done.stderr[-2000:]
    return done.stdout.splitlines()


@pytest.mark.slow
def test_a_remember_killed_before_its_commit_is_recovered_with_its_evidence(tmp_path):
    crashed = _run(tmp_path, "crash")
    assert crashed[-1] == "KILLED"
    acked = [line.split()[1] for line in crashed if line.startswith("ACK")]
    assert len(acked) == 1

    state = json.loads(_run(tmp_path, "recover")[-1])
    assert len(state["events"]) == 3  # every event appended once: the killed one is not written again
    assert sorted(state["event_rows"]) == sorted(state["events"])
    assert set(acked) <= set(state["files"])
    assert sorted(state["rows"]) == sorted(state["files"])  # every file indexed, the killed remember's too
    for cited in state["files"].values():
        assert set(cited) <= set(state["event_rows"])
