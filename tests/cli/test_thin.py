"""The thin CLI: with a server it imports no Django and no model; without one, the same command runs the same API
in-process and prints the same thing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.support.ports import free_port
from tests.support.served import served_home

pytestmark = pytest.mark.slow

PROBE = ("import sys, atexit; atexit.register(lambda: sys.stderr.write("
         "'\\nMODULES django=%s fastembed=%s\\n' % ('django' in sys.modules, 'fastembed' in sys.modules))); "
         "from ormah_site.cli import main; main()")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    with served_home(tmp_path_factory.mktemp("thin") / "home") as env:
        yield env


def run(env, *args, server=True) -> subprocess.CompletedProcess:
    env = dict(env) if server else {**env, "ORMAH_PORT": str(free_port())}  # nothing listens there
    out = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True, text=True, timeout=300)
    return out


def output(result: subprocess.CompletedProcess) -> tuple[str, str]:
    assert result.returncode == 0, result.stderr
    errors, _, modules = result.stderr.rpartition("\nMODULES ")
    return result.stdout, modules.strip()


def test_server_path_loads_neither_django_nor_the_model_and_matches_the_local_path(served):
    out, modules = output(run(served, "remember", "The staging database listens on port 5433", "--tags", "db",
                              "--json"))
    assert modules == "django=False fastembed=False"
    node_id = json.loads(out)["node"]["id"]
    for command in (["show", node_id[:8]], ["recall", "staging database port"], ["self"],
                    ["context-pack", "staging database"], ["recall", "staging", "--json"]):
        thin, modules = output(run(served, *command))
        assert modules == "django=False fastembed=False", command
        local, modules = output(run(served, *command, server=False))
        assert modules.startswith("django=True"), command
        assert thin == local, command
    assert "port 5433" in thin


def test_writes_without_a_server_and_errors_both_ways(served):
    out, modules = output(run(served, "remember", "Deploys go out on Tuesdays", "--type", "decision",
                              server=False))
    assert modules.startswith("django=True")
    node_id = out.split("ID: ")[1].split()[0]
    assert out.startswith("Remembered [decision]: Deploys go out on Tuesdays")
    shown, _ = output(run(served, "show", node_id))
    assert shown.startswith("[decision]")
    for server in (True, False):
        missing = run(served, "show", "ffffffff", server=server)
        assert missing.returncode == 1
        assert missing.stderr.startswith("ormah: No memory")
    out, _ = output(run(served, "outdated", node_id[:8], "--reason", "moved to Wednesdays"))
    assert out == f"Marked {node_id} outdated\n"
    out, _ = output(run(served, "forget", node_id, server=False))
    assert out.startswith(f"Forgot {node_id}")


def test_a_missing_token_file_is_named_not_blamed_on_another_home(served, tmp_path):
    nowhere = tmp_path / "no_token"
    missing = run({**served, "ORMAH_TOKEN_FILE": str(nowhere)}, "recall", "deploys")
    assert missing.returncode == 1
    assert missing.stderr.startswith(f"ormah: No API token: ORMAH_API_TOKEN is not set and {nowhere} is missing or "
                                     "empty (`ormah init` writes a new one)"), missing.stderr
    wrong = run({**served, "ORMAH_API_TOKEN": "not-this-home-s-token"}, "recall", "deploys")
    assert wrong.returncode == 1
    assert wrong.stderr.startswith("ormah: The server at http://127.0.0.1:"), wrong.stderr
