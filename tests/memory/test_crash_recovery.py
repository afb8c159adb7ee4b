"""SIGKILL in the middle of a stream of writes: every file parses and a rebuild recovers every acknowledged write."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from memory import runtime
from memory.domain.markdown import parse
from memory.models import NodeRow
from memory.rebuild import rebuild

SCRIPT = Path(__file__).resolve().parent.parent / "support" / "write_stream.py"


def run_and_kill(home: Path, acks_before_kill: int) -> list[tuple[str, int]]:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING"}
    env.pop("ORMAH_DB_PATH", None)
    proc = subprocess.Popen([sys.executable, str(SCRIPT)], env=env, stdout=subprocess.PIPE, text=True)
    acked = []
    try:
        for line in proc.stdout:
            if line.startswith("ACK"):
                _, node_id, n = line.split()
                acked.append((node_id, int(n)))
                if len(acked) >= acks_before_kill:
                    break
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    return acked


@pytest.mark.slow
def test_sigkill_during_writes_loses_no_acknowledged_memory(tmp_path, settings, db):
    rng = random.Random(7)
    child_home = tmp_path / "child"
    acked = run_and_kill(child_home, rng.randint(15, 30))
    nodes_dir = child_home / "memory" / "nodes"
    files = sorted(nodes_dir.glob("*.md"))
    parsed = {parse(f.read_text(), source=str(f)).id for f in files}  # raises if any file is torn
    assert {node_id for node_id, _ in acked} <= parsed

    ormah = dict(settings.ORMAH)
    ormah.update(HOME=child_home, MEMORY_DIR=child_home / "memory")
    settings.ORMAH = ormah
    report = rebuild(runtime.store(), embedder=runtime.embedder())

    assert report.malformed == []
    assert {node_id for node_id, _ in acked} <= set(NodeRow.objects.values_list("uid", flat=True))
    for node_id, n in acked:
        if n % 3 == 0:
            assert NodeRow.objects.get(uid=node_id).content.endswith("revised")
