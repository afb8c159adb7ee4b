"""SQLite backend that loads sqlite-vec on every connection (tech notes §1).

Python builds without ``enable_load_extension`` (pyenv's default) cannot load
sqlite-vec through the stdlib driver, so this backend picks the first driver
that can: stdlib, then pysqlite3, then sqlean. It installs that driver as
``sys.modules["sqlite3"]`` before Django's sqlite backend is imported, so the
cursor classes and version checks all agree on one driver.
"""

from __future__ import annotations

import importlib
import os
import sys

from django.core.exceptions import ImproperlyConfigured


def _pick_driver():
    forced = os.environ.get("ORMAH_SQLITE_DRIVER")  # stdlib | pysqlite3 | sqlean
    for name in [forced] if forced else ["stdlib", "pysqlite3", "sqlean"]:
        modname = "sqlite3" if name == "stdlib" else name
        try:
            pkg = importlib.import_module(modname)
            dbapi = importlib.import_module(modname + ".dbapi2")
        except ImportError:
            continue
        if hasattr(dbapi.Connection, "enable_load_extension"):
            return name, pkg, dbapi
    raise ImproperlyConfigured(
        "No sqlite3 driver can load extensions. Install pysqlite3-binary (Linux x86_64) "
        "or sqlean.py (macOS, Windows, aarch64)."
    )


DRIVER, _pkg, _dbapi = _pick_driver()
if DRIVER != "stdlib":
    _loaded = sys.modules.get("django.db.backends.sqlite3.base")
    if _loaded is not None and _loaded.Database is not _dbapi:
        raise ImproperlyConfigured(
            "django.db.backends.sqlite3 was imported before the sqlitevec backend swapped the driver"
        )
    sys.modules["sqlite3"] = _pkg
    sys.modules["sqlite3.dbapi2"] = _dbapi

import sqlite_vec  # noqa: E402
from django.db.backends.sqlite3 import base as _sqlite  # noqa: E402

Database = _sqlite.Database


class DatabaseWrapper(_sqlite.DatabaseWrapper):
    """Django's SQLite wrapper plus sqlite-vec, WAL, a busy timeout and synchronous=NORMAL."""

    display_name = f"SQLite+sqlite-vec ({DRIVER})"

    def get_new_connection(self, conn_params):
        if not self.is_in_memory_db():
            _private(str(self.settings_dict["NAME"]))
        conn = super().get_new_connection(conn_params)
        try:
            conn.enable_load_extension(True)
            sqlite_vec.load(conn)
            conn.enable_load_extension(False)
        except Exception as exc:  # Trigger: the extension cannot load. Why: every query needs it. Outcome: fail loudly.
            raise ImproperlyConfigured(f"sqlite-vec could not be loaded with the {DRIVER} driver: {exc}") from exc
        ms = int(float(self.settings_dict["OPTIONS"].get("timeout", 5)) * 1000)
        conn.execute(f"PRAGMA busy_timeout = {ms}")
        if not self.is_in_memory_db():
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
        return conn


def _private(path: str) -> None:
    """The index file 0600, and its WAL and shared-memory files (SQLite gives them the database file's mode): it
    holds every memory's text, so it must not depend on the home folder being 0700. Created empty when missing (an
    empty file is a new database to SQLite); an existing one readable by others is made private again."""
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
        for name in (path, f"{path}-wal", f"{path}-shm"):
            try:
                if os.stat(name).st_mode & 0o077:
                    os.chmod(name, 0o600)
            except FileNotFoundError:
                continue
    except OSError:  # a read-only home or a file of another owner: SQLite's own open gives the real error
        pass
