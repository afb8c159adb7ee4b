"""SIGKILL in the middle of a batch remember (one unit of work for the whole batch, memory.services.nodes_create).

A process remembers a first batch (acknowledged: the call returned), then a second, larger one, and is killed at a
seeded moment while the second batch's files are being written. The index must hold the first batch and nothing of
the second (its one transaction never committed), every file must parse, and `ormah doctor --heal` must leave an
index equal to a fresh rebuild that holds every acknowledged memory (the second batch's files that reached the
disk are memories too: the files are the truth). Hash embedder: this is plumbing, not semantics.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap

import pytest

from tests.faults.support import ROOT, SEED, child_env, index_count, kill, verify, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.slow]

EMBEDDER = {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
ACKED, BATCH = 20, 400
ROWS = "SELECT count(*) FROM memory_noderow"
WRITER = textwrap.dedent("""
    import json, sys
    import django
    django.setup()
    from memory.domain.requests import NodeCreate
    from memory.services import nodes_remember
    acked, batch = int(sys.argv[1]), int(sys.argv[2])
    first = nodes_remember(items=[(NodeCreate(content=f"Acknowledged memory {i} about kettles"), None)
                                  for i in range(acked)])
    print("ACKED " + json.dumps([r.node.id for r in first]), flush=True)
    nodes_remember(items=[(NodeCreate(content=f"Batch memory {i} about teapots number {i * 31 % 97}"), None)
                          for i in range(batch)])
    print("DONE", flush=True)
""")


def _node_files(home) -> int:
    with os.scandir(home / "memory" / "nodes") as entries:
        return sum(1 for e in entries if e.name.endswith(".md") and not e.name.startswith("."))


def test_a_batch_killed_while_writing_its_files_leaves_no_half_index_and_loses_no_acknowledged_memory(fault_home):
    home = fault_home
    rows_before = index_count(home, ROWS)
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(ACKED), str(BATCH)], cwd=ROOT,
                              env=child_env(home, **EMBEDDER), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True)
    try:
        line = writer.stdout.readline()
        assert line.startswith("ACKED "), writer.stderr.read()[-3000:] if writer.poll() is not None else line
        acked = json.loads(line.removeprefix("ACKED "))
        files_acked = _node_files(home)
        at = random.Random(SEED + 13).randint(1, BATCH // 4)
        # Kill as soon as `at` files of the second batch are on disk (its index transaction comes after all 400).
        reached = wait_until(lambda: _node_files(home) >= files_acked + at, 300, 0.001)
    finally:
        kill(writer.pid)
        writer.wait(timeout=30)
    assert reached, writer.stderr.read()[-3000:]
    rows_at_kill = index_count(home, ROWS)
    files_at_kill = _node_files(home) - files_acked
    assert rows_at_kill == rows_before + ACKED  # none of the killed batch: its one transaction never committed
    assert at <= files_at_kill < BATCH
    report = verify(home, **EMBEDDER)
    assert report["unparsable"] == []
    assert len(report["temp_files"]) <= 1  # at most the file being written at the kill, never a live name
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert report["healed"] == report["rebuilt"]
    assert set(acked) <= set(report["healed"]["nodes"])
    assert len(report["healed"]["nodes"]) == rows_before + ACKED + files_at_kill
    assert report["doctor_after"]["ok"], report["doctor_after"]
