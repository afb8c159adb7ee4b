"""SIGKILL in the middle of a batch remember (one unit of work for the whole batch, memory.services.nodes_create).

A process remembers a first batch (acknowledged: the call returned), then a second, larger one, and is killed at a
seeded moment while the second batch's files are being written (memory.files_new.write_new_nodes: each written and
fsynced without a name, then linked). The index must hold the first batch and nothing of
the second (its one transaction never committed), every file must parse, and `ormah doctor --heal` must leave an
index equal to a fresh rebuild that holds every acknowledged memory (the second batch's files that reached the
disk are memories too: the files are the truth). Hash embedder: this is plumbing, not semantics.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest

from tests.faults.support import ROOT, SEED, child_env, index_count, kill, verify

pytestmark = [pytest.mark.faults, pytest.mark.slow]

EMBEDDER = {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
ACKED, BATCH = 20, 400
ROWS = "SELECT count(*) FROM memory_noderow"
WRITER = textwrap.dedent("""
    import json, os, signal, sys
    import django
    django.setup()
    from memory import files_new
    from memory.domain.requests import NodeCreate
    from memory.services import nodes_remember
    acked, batch, at = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    first = nodes_remember(items=[(NodeCreate(content=f"Acknowledged memory {i} about kettles"), None)
                                  for i in range(acked)])
    print("ACKED " + json.dumps([r.node.id for r in first]), flush=True)
    name_new, written = files_new._name_new, []

    def name_then_die(*args, **kwargs):  # SIGKILL (no cleanup) right after the at-th file of the batch has its name
        stored = name_new(*args, **kwargs)
        written.append(1)
        if len(written) == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return stored

    files_new._name_new = name_then_die
    nodes_remember(items=[(NodeCreate(content=f"Batch memory {i} about teapots number {i * 31 % 97}"), None)
                          for i in range(batch)])
    print("DONE", flush=True)
""")


def _node_files(home) -> int:
    with os.scandir(home / "memory" / "nodes") as entries:
        return sum(1 for e in entries if e.name.endswith(".md") and not e.name.startswith("."))


def test_a_batch_killed_while_writing_its_files_leaves_no_half_index_and_loses_no_acknowledged_memory(fault_home):
    home = fault_home
    rows_before, files_before = index_count(home, ROWS), _node_files(home)
    at = random.Random(SEED + 13).randint(1, BATCH // 4)
    with (home / "writer-stderr.log").open("w") as log:  # a file, not a pipe nobody reads while it runs
        writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ACKED), str(BATCH), str(at)], cwd=ROOT,
                                  env=child_env(home, **EMBEDDER), stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        out, _ = writer.communicate(timeout=300)
    finally:
        if writer.poll() is None:
            kill(writer.pid)
            writer.wait(timeout=30)
    stderr = (home / "writer-stderr.log").read_text(errors="replace")[-3000:]
    assert out.startswith("ACKED "), stderr
    assert "DONE" not in out and writer.returncode == -signal.SIGKILL, (out[-500:], stderr)
    acked = json.loads(out.splitlines()[0].removeprefix("ACKED "))
    files_acked = files_before + ACKED
    rows_at_kill = index_count(home, ROWS)
    files_at_kill = _node_files(home) - files_acked
    assert rows_at_kill == rows_before + ACKED  # none of the killed batch: its one transaction never committed
    assert files_at_kill == at  # killed right after its at-th file (its index transaction comes after all 400)
    report = verify(home, **EMBEDDER)
    assert report["unparsable"] == []
    assert report["temp_files"] == []  # a batch's files have no name until they are whole and fsynced
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert report["healed"] == report["rebuilt"]
    assert set(acked) <= set(report["healed"]["nodes"])
    assert len(report["healed"]["nodes"]) == rows_before + ACKED + files_at_kill
    assert report["doctor_after"]["ok"], report["doctor_after"]
