"""The maintenance lock and the schedules across hosts sharing one PostgreSQL database (skipped on SQLite).

The other host is a real child process with its own ORMAH_HOME (so its flock file is not ours) on the test
database: only the database can make it and us exclusive.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection
from django_q.models import Schedule

from maintenance.conf import get_conf
from maintenance.errors import JobBusy
from maintenance.locking import job_lock, schedules_lock
from maintenance.models import JobRunRow
from maintenance.runner import job_execute
from maintenance.schedules import PREFIX, schedules_sync
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]
REPO = Path(__file__).resolve().parents[2]

HOLD_JOB_LOCK = """
import sys
from pathlib import Path
import django
django.setup()
from maintenance.locking import job_lock, schedules_lock
with job_lock(Path(sys.argv[1])):
    print("held", flush=True)
    sys.stdin.read()
"""

SYNC_SCHEDULES = """
import json
import django
django.setup()
from maintenance.schedules import schedules_sync
print(json.dumps(schedules_sync()), flush=True)
"""


def _database_url() -> str:
    d = connection.settings_dict
    auth = quote(d["USER"]) + (":" + quote(d["PASSWORD"]) if d["PASSWORD"] else "")
    host = d["HOST"] or "localhost"
    if host.startswith("/"):
        return f"postgres://{auth}@/{quote(d['NAME'])}?host={quote(host)}&port={d['PORT'] or 5432}"
    return f"postgres://{auth}@{host}:{d['PORT'] or 5432}/{quote(d['NAME'])}"


def _other_host(tmp_path, script: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ormah_site.settings", "ORMAH_HOME": str(tmp_path / "other-host"),
           "ORMAH_DATABASE_URL": _database_url(), "ORMAH_LLM_PROVIDER": "none"}
    return subprocess.Popen([sys.executable, "-c", script, *args], env=env, cwd=REPO, stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(condition, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def _holding(tmp_path) -> subprocess.Popen:
    other = _other_host(tmp_path, HOLD_JOB_LOCK, str(tmp_path / "other-host" / ".maintenance.lock"))
    line = other.stdout.readline()
    assert line == "held\n", other.stderr.read()
    return other


def _acquires() -> bool:
    try:
        with job_lock(get_conf().job_lock_file):
            return True
    except JobBusy:
        return False


def test_a_job_is_busy_while_another_host_runs_one(home, tmp_path, settings):
    settings.ORMAH = {**settings.ORMAH, "LLM_PROVIDER": "none"}
    other = _holding(tmp_path)
    try:
        busy = job_execute("auto_cluster")
    finally:
        other.stdin.close()
        other.wait(timeout=60)

    assert (busy.status, busy.error) == ("busy", "Another maintenance job is running (on another host)")
    assert job_execute("auto_cluster").status == "ok"
    assert list(JobRunRow.objects.order_by("id").values_list("status", flat=True)) == ["busy", "ok"]


def test_a_killed_host_lets_go_of_the_lock(home, tmp_path):
    other = _holding(tmp_path)
    try:
        assert not _acquires()
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait(timeout=60)

    _wait_for(_acquires, "the dead host's session to end")


def test_hosts_starting_at_once_create_each_schedule_once(home, tmp_path):
    Schedule.objects.filter(name__startswith=PREFIX).delete()

    def waiting_for_the_schedules_lock() -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted")
            return cursor.fetchone()[0] == 1

    with schedules_lock():  # this host is in the middle of its sync when the other starts its own
        other = _other_host(tmp_path, SYNC_SCHEDULES)
        _wait_for(waiting_for_the_schedules_lock, "the other host to wait for the schedules lock")
        ours = schedules_sync()
    out, err = other.communicate(timeout=60)

    assert ours["created"] == 8
    assert out.strip() == '{"created": 0, "updated": 0, "removed": 0, "unchanged": 8}', err
    assert Schedule.objects.filter(name__startswith=PREFIX).count() == 8
