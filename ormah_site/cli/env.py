"""Where the CLI's Ormah lives (ORMAH_HOME, the index, the server, the token), read without importing Django."""

from __future__ import annotations

import os
import sqlite3
from contextlib import closing
from pathlib import Path

from whisper.hook_env import api_token, ormah_home, server_url

__all__ = ["api_token", "home_problem", "ormah_home", "server_url"]

INIT_HINT = "run `ormah init`"


def _db_path(home: Path) -> Path:
    raw = os.environ.get("ORMAH_DB_PATH")
    return Path(raw).expanduser() if raw else home / "index.sqlite3"


def home_problem() -> str | None:
    """Why no command but `init` can run in this ORMAH_HOME, or None when it is initialised.

    A home that does not exist is an error (a mistyped ORMAH_HOME must not silently become an empty store); so is
    an index without its tables. Read with the standard library's sqlite3, read-only, in a millisecond.
    """
    home = ormah_home()
    if not home.is_dir():
        return f"ORMAH_HOME {home} does not exist: check ORMAH_HOME, or {INIT_HINT} to create it"
    if os.environ.get("ORMAH_DATABASE_URL"):
        return None  # the index is on a PostgreSQL server (docs/team-server.md); `ormah doctor` checks it
    db = _db_path(home)
    if not db.is_file():
        return f"Ormah is not initialised in {home} (no index at {db}): {INIT_HINT}"
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)) as conn:
            found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'django_migrations'"
                                 ).fetchone()
    except sqlite3.DatabaseError as exc:
        return f"The index {db} cannot be read ({exc}): {INIT_HINT}, or `ormah doctor` to see more"
    if not found:
        return f"Ormah is not initialised in {home} (the index has no tables): {INIT_HINT}"
    return None
