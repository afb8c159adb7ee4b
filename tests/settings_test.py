"""Test settings: a temporary ORMAH_HOME unless one is given, the engine of ORMAH_TEST_DATABASE_URL (SQLite when
unset), then the real settings."""

import os
import tempfile
from pathlib import Path

os.environ.setdefault("ORMAH_HOME", tempfile.mkdtemp(prefix="ormah-test-home-"))
# The suite runs on SQLite unless ORMAH_TEST_DATABASE_URL names a PostgreSQL server (`make test-pg`); a server
# URL in ORMAH_DATABASE_URL is never used by the tests (pytest-django would create test_<name> beside it).
os.environ.pop("ORMAH_DATABASE_URL", None)
if os.environ.get("ORMAH_TEST_DATABASE_URL"):
    os.environ["ORMAH_DATABASE_URL"] = os.environ["ORMAH_TEST_DATABASE_URL"]
os.environ.setdefault("ORMAH_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ormah-test-models"))

from ormah_site.settings import *  # noqa: E402,F401,F403

# Processes the tests start (serve, qcluster, the CLI, the fault scenarios) build their own index in their own
# home, on SQLite for now: one shared PostgreSQL database would mix their stores (docs/team-server.md).
os.environ.pop("ORMAH_DATABASE_URL", None)
os.environ.pop("ORMAH_TEST_DATABASE_URL", None)

# The test index on SQLite is one in-memory database whose connection pytest-django shares between a test and its
# live server's threads (the browser tests). pysqlite3's statement cache breaks when two threads prepare the same
# statement at once (session 26's final .ci/run on 858a8eb: a KeyError on every query once the cache evicted it, so
# every browser test after the first failed): tests/support/sqlite_shared runs each statement of an in-memory
# connection under one lock (tests/test_shared_test_connection.py). A cache of 8,192 statements (128 by default)
# keeps most of the suite's statements prepared; it alone did not close the race, since the suite prepares more
# distinct statements than that (each savepoint's name is new). Production opens a connection per thread
# (ormah_site/sqlitevec) and keeps the default.
if DATABASES["default"]["ENGINE"] == "ormah_site.sqlitevec":  # noqa: F405
    DATABASES["default"]["ENGINE"] = "tests.support.sqlite_shared"  # noqa: F405
    DATABASES["default"]["OPTIONS"] = {**DATABASES["default"]["OPTIONS"], "cached_statements": 8192}  # noqa: F405
