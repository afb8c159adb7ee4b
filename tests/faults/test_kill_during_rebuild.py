"""SIGKILL of `ormah rebuild` at seeded points: right after it wiped the index, and after its first chunk of rows.

A full rebuild commits the wipe and then each chunk of 500 files separately, so a kill leaves an empty or a
partial index, with edges into the missing part dangling. `ormah doctor --heal` must bring back every memory and
every edge (the healed index equals a fresh rebuild) and `ormah doctor --json` must then be ok.

The files are indexed with the hash embedder: this is plumbing (rows, edges, FTS, vectors), not semantics.
"""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.mounts import fast_folder
from tests.faults.support import MANAGE, SEED, child_env, copy_home, index_count, kill, verify, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.slow]

FILES = 600
EMBEDDER = {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
ROWS = "SELECT count(*) FROM memory_noderow"
SEED_SCRIPT = str(Path(__file__).resolve().parent / "seed_files.py")
STAGES = {"wiped": lambda rows: rows == 0, "first chunk": lambda rows: rows == 500}


@pytest.fixture
def rebuild_home(template_home, tmp_path):
    with fast_folder(tmp_path / "fast") as folder:
        yield copy_home(template_home, folder / "home")


def test_sigkill_during_rebuild_then_heal_restores_every_memory_and_edge(rebuild_home):
    fault_home = rebuild_home
    seeded = subprocess.run([sys.executable, SEED_SCRIPT, str(FILES)], env=child_env(fault_home, **EMBEDDER),
                            capture_output=True, text=True, timeout=180)
    assert "SEEDED" in seeded.stdout, seeded.stderr[-2000:]
    assert index_count(fault_home, ROWS) == FILES + 1  # and the self node

    rng = random.Random(SEED + 20)
    killed_at = []
    for stage in rng.sample(sorted(STAGES), len(STAGES)):
        proc = subprocess.Popen([sys.executable, MANAGE, "rebuild", "--json"], env=child_env(fault_home, **EMBEDDER),
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        reached = wait_until(lambda: STAGES[stage](index_count(fault_home, ROWS)) or proc.poll() is not None,
                             60, 0.002)
        kill(proc.pid)
        proc.wait(timeout=10)
        killed_at.append((stage, index_count(fault_home, ROWS), reached and proc.returncode == -9))

    assert [k[2] for k in killed_at] == [True, True], killed_at
    report = verify(fault_home, **EMBEDDER)
    assert report["unparsable"] == []
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert len(report["healed"]["nodes"]) == FILES + 1
    assert len(report["healed"]["edges"]) == FILES - 1
    assert report["healed"] == report["rebuilt"]
    assert report["doctor_after"]["ok"], report["doctor_after"]
