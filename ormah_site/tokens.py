"""API tokens: ORMAH_API_TOKEN or a 0600 file in ORMAH_HOME (one laptop), or named tokens in the database (every
host serving one database accepts them: docs/team-server.md). Compared in constant time, here and nowhere else.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import time
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import Q
from django.utils import timezone

from memory.errors import Conflict, OrmahError, ValidationFailed
from ormah_site.models import ApiTokenRow

logger = logging.getLogger(__name__)

SECRET_PREFIX = "ormah_"  # makes a leaked secret easy to recognise (secret scanners, logs)
LAST_USED_RESOLUTION = timedelta(minutes=1)  # last_used_at is written at most this often per token
NAME_MAX = 100


class ApiTokenNotFound(OrmahError):
    """No token of that name that is not revoked yet."""

    code = "not_found"
    http_status = 404


# ---------------------------------------------------------------------------
# The token of ORMAH_API_TOKEN or the token file (single laptop; the CLI, hook and MCP server send it)
# ---------------------------------------------------------------------------

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
        return _file_token(token_file())
    except FileNotFoundError:
        return None


# The token file as last read: (path, the file's identity, size and times, its token). One entry; every request checks
# it with one stat (~2 us) where reading the file took ~17 us (docs/benchmarks.md "Served CPU, session 26"). A write of
# the file changes its ctime, unless it falls in the clock tick of the previous change (file times are coarse, a few ms
# on Linux): so the file is kept only when its last change is SETTLED_SECONDS older than the read, and any later
# write, a rotation (a new file renamed over it: another inode) or an edit in place, shows in the next stat.
_kept: tuple[str, tuple, str | None] | None = None
SETTLED_SECONDS = 2.0


def _file_token(path: Path) -> str | None:
    global _kept
    st = os.stat(path)
    key = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    kept = _kept
    if kept is not None and kept[1] == key and kept[0] == str(path):
        return kept[2]
    token = path.read_text().strip() or None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > SETTLED_SECONDS * 1e9:
        _kept = (str(path), key, token)
    return token


# ---------------------------------------------------------------------------
# Judging a presented token
# ---------------------------------------------------------------------------

def token_digest(secret: str) -> str:
    """The sha256 hex digest a database token is stored and looked up by."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def token_matches(presented: str | None, *, now: datetime | None = None) -> bool:
    """Whether a presented token opens the API: the configured one (no query), else a database token not revoked.

    Both comparisons are constant-time (`hmac.compare_digest` on the whole byte strings). A database token costs one
    lookup on the digest's unique index, and an UPDATE of its last_used_at when that is a minute old or more.
    """
    if not presented:
        return False
    expected = token_current()
    if expected and hmac.compare_digest(presented.encode("utf-8"), expected.encode("utf-8")):
        return True
    return _database_token_matches(token_digest(presented), now=now or timezone.now())


def _database_token_matches(digest: str, *, now: datetime) -> bool:
    row = ApiTokenRow.objects.filter(digest=digest, revoked_at__isnull=True).only("digest", "last_used_at").first()
    if row is None or not hmac.compare_digest(row.digest.encode("ascii"), digest.encode("ascii")):
        return False
    if row.last_used_at is None or now - row.last_used_at >= LAST_USED_RESOLUTION:
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lte=now - LAST_USED_RESOLUTION)
        try:
            ApiTokenRow.objects.filter(stale, pk=row.pk).update(last_used_at=now)
        except OperationalError:
            # Trigger: SQLite stayed locked by a long write past its busy timeout. Why: last_used_at is a hint, the
            # token is valid either way. Outcome: the request goes on; the next use after a minute writes it.
            logger.warning("Could not record the use of API token %s (the database is locked)", row.pk)
    return True


# ---------------------------------------------------------------------------
# Services and selectors: `ormah token create|list|revoke`, the admin
# ---------------------------------------------------------------------------

def _clean_name(name: str) -> str:
    cleaned = (name or "").strip()
    if not cleaned or len(cleaned) > NAME_MAX or not cleaned.isprintable():
        raise ValidationFailed(f"A token name is 1 to {NAME_MAX} printable characters (got {name!r})")
    return cleaned


def api_token_create(*, name: str, now: datetime | None = None) -> tuple[ApiTokenRow, str]:
    """Create a named API token; returns its row and its secret, which is stored nowhere (only its sha256).

    Raises ValidationFailed for a blank or overlong name, Conflict when a token of that name is not revoked.
    """
    cleaned = _clean_name(name)
    secret = SECRET_PREFIX + secrets.token_urlsafe(32)
    try:
        with transaction.atomic():
            row = ApiTokenRow.objects.create(name=cleaned, digest=token_digest(secret),
                                             created_at=now or timezone.now())
    except IntegrityError:
        raise Conflict(f"An API token named {cleaned!r} exists: revoke it first, or choose another name") from None
    return row, secret


def api_token_list() -> list[ApiTokenRow]:
    """Every database token, revoked ones included, oldest first."""
    return list(ApiTokenRow.objects.order_by("created_at", "pk"))


def api_token_revoke(*, name: str, now: datetime | None = None) -> ApiTokenRow:
    """Revoke the token of that name: every host refuses it from the next request on.

    Raises ApiTokenNotFound when no token of that name is active (never created, or revoked already).
    """
    cleaned = _clean_name(name)
    row = ApiTokenRow.objects.filter(name=cleaned, revoked_at__isnull=True).first()
    if row is None:
        raise ApiTokenNotFound(f"No API token named {cleaned!r} that is not revoked (see `ormah token list`)")
    row.revoked_at = now or timezone.now()
    row.save(update_fields=["revoked_at"])
    return row
