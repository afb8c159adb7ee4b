"""Security fixtures: a configured API token, users of each kind, clients that enforce CSRF like a browser."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client

TOKEN = "security-token-0123456789abcdef"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def api_token(home, settings) -> str:
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return TOKEN


@pytest.fixture
def users(db, settings):
    """A superuser (the UI account), a staff user without permissions, and a plain user."""
    from django.contrib.auth import get_user_model

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    model = get_user_model()
    return {
        "superuser": model.objects.create_superuser("ormah", None, PASSWORD),
        "staff": model.objects.create_user("staffer", None, PASSWORD, is_staff=True),
        "plain": model.objects.create_user("plain", None, PASSWORD),
    }


def signed_in(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


# ---------------------------------------------------------------------------
# A real home made by `ormah init` with the network sandbox on (tests/security/sandbox/sitecustomize.py)
# ---------------------------------------------------------------------------

SANDBOX = str(Path(__file__).resolve().parent / "sandbox")


def sandbox_env(home, net_log, **extra) -> dict:
    from tests.faults.support import child_env

    env = child_env(home, ORMAH_NET_LOG=str(net_log), **extra)
    env["PYTHONPATH"] = SANDBOX + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@pytest.fixture(scope="session")
def sandboxed(tmp_path_factory):
    """`ormah init`, `ormah remember` and `ormah recall` on a fresh home, every outbound connection refused."""
    import subprocess
    import sys

    from tests.faults.support import MANAGE

    root = tmp_path_factory.mktemp("sandboxed")
    home, net_log = root / "home", root / "net.log"
    runs = {}
    for name, args in [("init", ["init", "--name", "Sandbox", "--quiet"]),
                       ("remember", ["remember", "Sandboxed memory about quiet networks", "--json"]),
                       ("recall", ["recall", "quiet networks", "--json"])]:
        runs[name] = subprocess.run([sys.executable, MANAGE, *args], env=sandbox_env(home, net_log),
                                    capture_output=True, text=True, timeout=180)
    return {"home": home, "net_log": net_log, "runs": runs}
