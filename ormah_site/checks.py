"""System checks: fail with a clear message when vec0 or FTS5 cannot be used, the index cannot be opened, the
job cluster's niceness is out of range or ORMAH_WEB_SOCKETS is not a layout; warn (a deployment check) when hosts
sharing a PostgreSQL database would sign sessions with keys of their own."""

from __future__ import annotations

from django.conf import settings
from django.core import checks as django_checks
from django.core.checks import Error, Tags, register
from django.db import connection

from ormah_site.web_sockets import WEB_SOCKETS


def _missing(exc: Exception) -> bool:
    """True when SQLite says a function or module does not exist (not a disk or permission failure)."""
    text = str(exc).lower()
    return "no such" in text or "not authorized" in text or "could not be loaded" in text


@register("database")
def check_sqlite_extensions(app_configs=None, **kwargs):
    """vec0 and FTS5 must both work on a fresh connection of the configured backend."""
    if connection.vendor != "sqlite":
        return []
    errors = []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT vec_version()")
    except Exception as exc:  # Trigger: extension missing or index unusable. Why: search needs it. Outcome: error.
        if not _missing(exc):
            # A full or read-only disk fails here too; telling the user to reinstall would send them the wrong way.
            return [Error(
                f"The index database {connection.settings_dict['NAME']} cannot be used: {exc}",
                hint="Check that its disk is not full or read-only (df -h; mount) and that you own ORMAH_HOME.",
                id="ormah.E003",
            )]
        errors.append(Error(
            f"sqlite-vec (vec0) is not available: {exc}",
            hint="Install the project's dependencies (pip install -e .); the backend needs pysqlite3-binary or sqlean.py.",
            id="ormah.E001",
        ))
    try:
        with connection.cursor() as cursor:
            cursor.execute("CREATE VIRTUAL TABLE temp.ormah_fts5_probe USING fts5(x)")
            cursor.execute("DROP TABLE temp.ormah_fts5_probe")
    except Exception as exc:  # Trigger: SQLite built without FTS5. Outcome: check error.
        errors.append(Error(
            f"SQLite FTS5 is not available: {exc}",
            hint="Use a SQLite build with FTS5 (pysqlite3-binary and sqlean.py both have it).",
            id="ormah.E002",
        ))
    return errors


@register("database")
def check_pgvector(app_configs=None, **kwargs):
    """On PostgreSQL, the pgvector extension must be installed on the server (the migrations create it)."""
    if connection.vendor != "postgresql":
        return []
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
            found = cursor.fetchone()
    except Exception as exc:  # Trigger: server unreachable. Why: nothing works without it. Outcome: check error.
        return [Error(f"The PostgreSQL database cannot be used: {exc}", hint="Check ORMAH_DATABASE_URL.",
                      id="ormah.E004")]
    if found is None:
        return [Error("The pgvector extension is not installed on the PostgreSQL server",
                      hint="Install pgvector (docs/team-server.md).", id="ormah.E005")]
    return []


@register()
def check_job_nice(app_configs=None, **kwargs):
    """ORMAH_JOB_NICE within 0-19: below 0 needs privilege (os.nice fails with EPERM as `ormah serve` starts the job
    cluster), above 19 is not a niceness."""
    nice = settings.ORMAH["JOB_NICE"]
    if 0 <= nice <= 19:
        return []
    return [Error(f"ORMAH_JOB_NICE is {nice}: the job cluster's niceness must be between 0 and 19",
                  hint="0 gives the jobs the web's priority, 10 (the default) lets the requests go first.",
                  id="ormah.E006")]


@register()
def check_web_sockets(app_configs=None, **kwargs):
    """ORMAH_WEB_SOCKETS is `shared` or `per-worker` (how more than one web worker listen; ormah_site.web_sockets):
    `ormah serve` stops at its checks on any other value instead of starting a server that listens some other way."""
    value = settings.ORMAH["WEB_SOCKETS"]
    if value in WEB_SOCKETS:
        return []
    return [Error(f"ORMAH_WEB_SOCKETS is {value!r}: it must be one of {', '.join(WEB_SOCKETS)}",
                  hint="shared (the default): one socket, each connection to a worker with a thread free; "
                       "per-worker: a socket per web worker (SO_REUSEPORT) (README, ORMAH_WEB_SOCKETS).",
                  id="ormah.E007")]


@register(Tags.security, deploy=True)
def check_shared_secret_key(app_configs=None, **kwargs):
    """With ORMAH_DATABASE_URL (a team server) the hosts must share ORMAH_SECRET_KEY, or sessions do not carry.

    A deployment check, as Django's own SECRET_KEY checks are (`ormah admin check --deploy`): every command of a
    host would print it otherwise, a one-host PostgreSQL store included.
    """
    if not settings.DATABASE_URL or settings.SECRET_KEY_FROM_ENV:
        return []
    return [django_checks.Warning(
        "ORMAH_DATABASE_URL is set but ORMAH_SECRET_KEY is not: this host signs sessions with the secret_key file "
        "of its own home, so a browser signed in on another host of the same database is signed out here",
        hint="Set ORMAH_SECRET_KEY to one value on every host (docs/team-server.md, \"Tokens, accounts and sessions "
             "across hosts\").",
        id="ormah.W001",
    )]
