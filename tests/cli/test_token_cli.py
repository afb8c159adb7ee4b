"""`ormah token create|list|revoke` through the real `ormah` command (argparse, then the management command)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def ormah(home, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, "ORMAH_HOME": str(home), "ORMAH_API_TOKEN": ""}
    for key in ("ORMAH_DB_PATH", "ORMAH_TOKEN_FILE", "ORMAH_DATABASE_URL", "DJANGO_SETTINGS_MODULE"):
        env.pop(key, None)
    return subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def test_create_list_and_revoke_through_the_command_line(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    assert ormah(home, "admin", "migrate", "--verbosity", "0").returncode == 0

    created = ormah(home, "token", "create", "ci-bot")
    listed = json.loads(ormah(home, "token", "list", "--json").stdout)
    revoked = ormah(home, "token", "revoke", "ci-bot")
    again = ormah(home, "token", "revoke", "ci-bot")
    nameless = ormah(home, "token", "create")

    assert created.returncode == 0 and created.stdout.startswith("ormah_") and created.stdout.count("\n") == 1
    assert "shown this once only" in created.stderr
    assert [(t["name"], t["revoked_at"]) for t in listed] == [("ci-bot", None)]
    assert revoked.stdout == "Revoked API token 'ci-bot': every host refuses it from now on.\n"
    assert again.returncode == 1 and "No API token named 'ci-bot' that is not revoked" in again.stderr
    assert nameless.returncode == 1 and "`token create` needs a name" in nameless.stderr


def test_an_unknown_action_is_refused_before_anything_starts(tmp_path):
    out = ormah(tmp_path, "token", "delete", "ci-bot")
    assert out.returncode == 2 and "invalid choice: 'delete'" in out.stderr
