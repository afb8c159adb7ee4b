"""Claims: secrets are files only their owner can read, the home is private, and the server listens on loopback
unless told otherwise (docs/security.md §5, §6)."""

from __future__ import annotations

import stat
import subprocess
import sys

import pytest

from ormah_site.management.commands import serve as serve_command
from ormah_site.tokens import token_ensure
from tests.faults.support import child_env


def mode(path) -> str:
    return oct(stat.S_IMODE(path.stat().st_mode))


@pytest.mark.slow
@pytest.mark.parametrize("name, expected", [
    ("api_token", "0o600"), ("secret_key", "0o600"), ("ui_password", "0o600"), (".write.lock", "0o600"),
    (".", "0o700"), ("logs", "0o700"), ("memory", "0o700"), ("memory/nodes", "0o700"),
])
def test_init_leaves_secrets_0600_and_folders_0700(sandboxed, name, expected):
    assert mode(sandboxed["home"] / name) == expected


@pytest.mark.slow
def test_memory_files_are_0600(sandboxed):
    files = list((sandboxed["home"] / "memory" / "nodes").glob("*.md"))
    assert len(files) == 2 and {mode(f) for f in files} == {"0o600"}


def test_a_token_file_readable_by_others_is_made_private_again(home, db):
    path = home / "api_token"
    path.write_text("tok-123\n")
    path.chmod(0o644)
    assert token_ensure() == "tok-123"
    assert mode(path) == "0o600"


def test_a_new_token_file_is_created_0600(home, db):
    token = token_ensure()
    assert len(token) >= 40 and mode(home / "api_token") == "0o600"


def _settings_probe(tmp_path, **env) -> list[str]:
    code = ("import django; django.setup(); from django.conf import settings; "
            "print(settings.HOST, *settings.ALLOWED_HOSTS)")
    done = subprocess.run([sys.executable, "-c", code], env=child_env(tmp_path / "home", **env), capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def test_the_default_bind_address_is_loopback(tmp_path):
    env = child_env(tmp_path)
    for key in ("ORMAH_HOST", "ORMAH_ALLOWED_HOSTS"):
        assert key not in env
    host, *allowed = _settings_probe(tmp_path)
    assert host == "127.0.0.1"
    assert set(allowed) == {"127.0.0.1", "localhost", "[::1]", "testserver"}


def test_another_bind_address_must_be_configured(tmp_path):
    assert _settings_probe(tmp_path, ORMAH_HOST="0.0.0.0")[0] == "0.0.0.0"


def test_serve_binds_gunicorn_to_the_configured_host(settings):
    web = serve_command.serve_parts(host=settings.HOST, port=settings.PORT, cluster=False)[0].argv
    assert web[web.index("--bind") + 1] == f"{settings.HOST}:{settings.PORT}" == "127.0.0.1:8787"