"""Claim: no telemetry, no model hub, nothing leaves the machine (docs/security.md §7).

`ormah init`, `remember` and `recall` run with a sitecustomize that refuses (and records) every connection and
name lookup that is not loopback; they must succeed with nothing recorded. Where strace exists, the same
commands are traced for connect() calls from native code (onnxruntime, tokenizers) too.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys

import pytest

from tests.faults.support import MANAGE
from tests.security.conftest import sandbox_env

pytestmark = pytest.mark.slow


def test_init_remember_and_recall_succeed_with_the_network_blocked(sandboxed):
    for name, run in sandboxed["runs"].items():
        assert run.returncode == 0, (name, run.stderr[-2000:])
    assert json.loads(sandboxed["runs"]["remember"].stdout)["id"]
    assert "quiet networks" in sandboxed["runs"]["recall"].stdout


def test_nothing_tried_to_leave_the_machine(sandboxed):
    log = sandboxed["net_log"]
    assert not log.exists() or log.read_text() == ""


def test_settings_switch_off_telemetry_before_any_library_loads(sandboxed, tmp_path):
    probe = ("import os, django; django.setup(); import onnxruntime, fastembed; "
             "print(os.environ['ORT_DISABLE_TELEMETRY'], os.environ['HF_HUB_OFFLINE'], os.environ['DO_NOT_TRACK'])")
    env = sandbox_env(sandboxed["home"], tmp_path / "net.log")
    for key in ("ORT_DISABLE_TELEMETRY", "HF_HUB_OFFLINE", "DO_NOT_TRACK"):
        env.pop(key, None)
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.split() == ["1", "1", "1"], done.stderr[-1000:]


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed: native code is not traced")
def test_no_native_code_connects_outside_either(sandboxed, tmp_path):
    trace = tmp_path / "trace"
    done = subprocess.run(["strace", "-f", "-qq", "-e", "trace=connect,sendto,sendmsg", "-o", str(trace),
                           sys.executable, MANAGE, "remember", "Traced memory about native sockets"],
                          env=sandbox_env(sandboxed["home"], tmp_path / "net.log"), capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr[-2000:]
    calls = [line for line in trace.read_text().splitlines() if "sin_addr" in line or "sin6_addr" in line]
    outside = [c for c in calls if not re.search(r'inet_addr\("127\.|inet_pton\(AF_INET6, "::1"', c)]
    assert outside == []
