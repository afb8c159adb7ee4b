"""The system check passes with the real backend: vec0 and FTS5 both load."""

from ormah_site.checks import check_sqlite_extensions


def test_extensions_check_passes(db):
    assert check_sqlite_extensions() == []


def test_a_driver_without_extension_loading_fails_loudly(tmp_path):
    import os
    import subprocess
    import sys

    # The SQLite driver is the subject: a PostgreSQL run's ORMAH_DATABASE_URL is left out.
    env = {**{k: v for k, v in os.environ.items() if k != "ORMAH_DATABASE_URL"}, "ORMAH_HOME": str(tmp_path), "ORMAH_SQLITE_DRIVER": "no-such-driver",
           "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    out = subprocess.run([sys.executable, "manage.py", "check"], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode != 0
    assert "No sqlite3 driver can load extensions" in out.stderr
