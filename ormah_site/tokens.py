"""The API token: from ORMAH_API_TOKEN or a 0600 file in ORMAH_HOME; compared in constant time."""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

from django.conf import settings


def token_file() -> Path:
    return Path(settings.ORMAH["TOKEN_FILE"])


def token_ensure() -> str:
    """Return the API token, creating the token file (mode 0600) when there is none."""
    configured = settings.ORMAH.get("API_TOKEN")
    if configured:
        return configured
    path = token_file()
    try:
        token = path.read_text().strip()
        if token:
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
            return token
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token + "\n")
    os.replace(tmp, path)
    return token


def token_current() -> str | None:
    """The token requests must present, or None when none has been set up yet."""
    configured = settings.ORMAH.get("API_TOKEN")
    if configured:
        return configured
    try:
        return token_file().read_text().strip() or None
    except FileNotFoundError:
        return None


def token_matches(presented: str | None) -> bool:
    """Constant-time comparison of a presented token with the current one."""
    expected = token_current()
    if not expected or not presented:
        return False
    return hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8"))
