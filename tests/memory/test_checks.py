"""The system checks: vec0 and FTS5 load with the real backend; the job niceness is within 0-19; a team server without a shared secret key is warned."""

import pytest

from ormah_site.checks import check_job_nice, check_shared_secret_key, check_sqlite_extensions
from tests.support.served import serve_stopped


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


@pytest.mark.parametrize(("nice", "ids"), [(0, []), (10, []), (19, []), (-1, ["ormah.E006"]), (20, ["ormah.E006"])])
def test_the_job_niceness_must_be_within_0_and_19(settings, nice, ids):
    settings.ORMAH = {**settings.ORMAH, "JOB_NICE": nice}
    assert [error.id for error in check_job_nice()] == ids


def test_serve_with_a_negative_job_niceness_stops_at_its_checks_with_a_clear_error(tmp_path):
    out = serve_stopped(tmp_path, ORMAH_JOB_NICE="-5")
    assert out.returncode != 0
    assert "(ormah.E006) ORMAH_JOB_NICE is -5" in out.stderr and "Traceback" not in out.stderr, out.stderr


# ---------------------------------------------------------------------------
# ormah.W001: the hosts of one PostgreSQL database must share ORMAH_SECRET_KEY
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(("database_url", "key_from_env", "ids"), [
    (None, False, []),  # SQLite: one host, its own secret_key file is right
    ("postgres://ormah@db.example:5432/ormah", True, []),
    ("postgres://ormah@db.example:5432/ormah", False, ["ormah.W001"]),
])
def test_a_team_server_without_a_shared_secret_key_is_warned(settings, database_url, key_from_env, ids):
    settings.DATABASE_URL, settings.SECRET_KEY_FROM_ENV = database_url, key_from_env

    assert [c.id for c in check_shared_secret_key()] == ids


def test_the_secret_key_warning_is_a_deployment_check():
    from django.core.checks.registry import registry

    assert (check_shared_secret_key in registry.get_checks(include_deployment_checks=True),
            check_shared_secret_key in registry.get_checks()) == (True, False)
