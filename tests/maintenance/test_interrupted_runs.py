"""A job run whose process was killed mid-run (SIGKILL, django-q2's timeout, a crash) no longer stays "running" in
the run ledger forever: the next run of a job, and each job worker the cluster starts, close it as interrupted,
naming the process, and the task list, the CLI and the jobs screen show it so. Real processes, killed for real."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command

from maintenance.models import JobRunRow
from maintenance.processes import HOST, process_of, this_process
from maintenance.runner import job_execute
from maintenance.services.tasks import task_list
from memory.domain.node import utcnow
from ormah_site.ui.view_models.jobs import jobs_dashboard
from tests.maintenance.test_live import MANAGE, ROOT, env_for, query, stop
from tests.support.ports import wait_until

SLEEPER = [sys.executable, "-c", "import time; time.sleep(120)"]


def _killed() -> tuple[int, int | None]:
    """The pid and start time of a real process, killed with SIGKILL and reaped."""
    proc = subprocess.Popen(SLEEPER)
    me = process_of(proc.pid)
    proc.kill()
    proc.wait()
    return proc.pid, me.start


def _running(job: str, **process) -> JobRunRow:
    return JobRunRow.objects.create(job=job, trigger="schedule", started_at=utcnow() - timedelta(minutes=5), **process)


def test_the_next_run_closes_the_runs_whose_process_is_gone_and_only_those(no_llm, db):
    dead, dead_start = _killed()
    alive = subprocess.Popen(SLEEPER)
    me = this_process()
    try:
        killed = _running("conflict_detector", host=HOST, pid=dead, proc_start=dead_start)
        reused = _running("auto_linker", host=HOST, pid=me.pid, proc_start=(me.start or 0) + 1)  # pid reused since
        living = _running("consolidator", host=HOST, pid=alive.pid, proc_start=process_of(alive.pid).start)
        elsewhere = _running("decay_manager", host="another-host", pid=dead, proc_start=dead_start)
        unknown = _running("importance_scorer")  # a row from before runs recorded their process

        assert job_execute("auto_cluster").status == "ok"

        status = dict(JobRunRow.objects.exclude(job="auto_cluster").values_list("id", "status"))
        assert status == {killed.id: "interrupted", reused.id: "interrupted", living.id: "running",
                          elsewhere.id: "running", unknown.id: "running"}
    finally:
        alive.kill()
        alive.wait()
    row = JobRunRow.objects.get(pk=killed.pk)
    assert row.error.startswith(f"interrupted: its process (pid {dead} on {HOST}) ended before the run did")
    assert row.finished_at is not None
    mine = JobRunRow.objects.get(job="auto_cluster")
    assert (mine.host, mine.pid, mine.proc_start) == (me.host, me.pid, me.start)


def test_the_task_list_the_cli_and_the_jobs_screen_show_an_interrupted_run(no_llm, db):
    dead, dead_start = _killed()
    _running("conflict_detector", host=HOST, pid=dead, proc_start=dead_start)
    job_execute("auto_cluster")

    last = {t["name"]: t["last_run"] for t in task_list()}["conflict_detector"]
    assert last["status"] == "interrupted" and last["error"].startswith(f"interrupted: its process (pid {dead} on")
    out = StringIO()
    call_command("tasks", "list", stdout=out)
    assert "last: interrupted" in next(line for line in out.getvalue().splitlines() if "conflict_detector" in line)
    job = {j.name: j for j in jobs_dashboard(now=utcnow()).jobs}["conflict_detector"]
    assert (job.state, job.last.status) == ("idle", "interrupted") and f"pid {dead}" in job.last.error


@pytest.mark.slow
def test_a_job_killed_mid_run_is_closed_when_the_cluster_starts(tmp_path):
    home = tmp_path / "home"
    env = env_for(home, "tests.maintenance.live_settings") | {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
    runner = subprocess.Popen([sys.executable, "-m", "tests.maintenance.killed_run"], env=env, cwd=ROOT,
                              start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        ready, _, _ = select.select([runner.stdout], [], [], 120)
        assert ready and runner.stdout.readline().strip() == b"started"
    finally:
        os.killpg(runner.pid, signal.SIGKILL)
        runner.wait()
    db = home / "index.sqlite3"
    sql = "SELECT job, status, pid, error FROM maintenance_jobrunrow"
    assert query(db, sql) == [("slow_test_job", "running", runner.pid, "")]

    cluster = subprocess.Popen([sys.executable, MANAGE, "qcluster"], env=env, cwd=ROOT, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        closed = wait_until(lambda: query(db, sql)[0][1] == "interrupted", 60, step=0.2)
    finally:
        stop(cluster)
    assert closed
    [(_, _, _, error)] = query(db, sql)
    assert error.startswith(f"interrupted: its process (pid {runner.pid} on {HOST}) ended before the run did")
