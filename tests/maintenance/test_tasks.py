"""The sleep cycle, the task list, schedules as data synced idempotently, the run ledger and the job lock."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.sql import emit_post_migrate_signal
from django_q.models import Schedule

from maintenance import registry
from maintenance.conf import get_conf
from maintenance.jobs import scheduled_job
from maintenance.models import JobRunRow
from maintenance.registry import maintenance_job
from maintenance.runner import job_execute
from maintenance.schedules import JOBS, SLEEP_CYCLE, schedules_sync
from tests.maintenance.support import held_elsewhere

ORDER = ["importance_scorer", "index_updater", "duplicate_merger", "conflict_detector", "auto_linker", "auto_cluster",
         "consolidator", "decay_manager"]


def test_run_all_answers_each_job_in_the_sleep_cycle_order(no_llm, api, remember):
    remember("Ormah uses SQLite as the index of its markdown files")
    remember("Ormah uses SQLite as the index for its markdown files.")
    response = api.post("/api/admin/tasks/run-all")
    assert response.status_code == 200
    body = response.json()
    assert [(r["job"], r["status"]) for r in body] == [(name, "ok") for name in ORDER]
    assert body[2]["counts"]["merged"] == 1
    assert list(JobRunRow.objects.order_by("id").values_list("job", "trigger")) == [(n, "api") for n in ORDER]


def test_the_task_list_shows_schedule_and_last_run_and_pause_works(no_llm, api):
    schedules_sync()
    job_execute("auto_cluster")
    tasks = {t["name"]: t for t in api.get("/api/admin/tasks").json()}
    assert {n: t["interval_minutes"] for n, t in tasks.items()} == {
        "auto_linker": 1440, "decay_manager": 1440, "conflict_detector": 1440, "duplicate_merger": 1440,
        "auto_cluster": 60, "consolidator": 1440, "importance_scorer": 120, "index_updater": 1}
    assert tasks["auto_cluster"]["last_run"]["status"] == "ok" and tasks["auto_linker"]["last_run"] is None
    assert api.post("/api/admin/tasks/auto_linker/pause").status_code == 200
    assert Schedule.objects.get(name="ormah:auto_linker").repeats == 0
    api.post("/api/admin/tasks/auto_linker/resume")
    assert Schedule.objects.get(name="ormah:auto_linker").repeats == -1
    assert api.post("/api/admin/tasks/nope/run").status_code == 404
    one = api.post("/api/admin/tasks/index_updater/run").json()
    assert (one["job"], one["status"]) == ("index_updater", "ok")


def test_schedules_sync_is_idempotent_and_repairs_drift(home, db):
    Schedule.objects.filter(name__startswith="ormah:").delete()
    assert schedules_sync() == {"created": 8, "updated": 0, "removed": 0, "unchanged": 0}
    assert schedules_sync() == {"created": 0, "updated": 0, "removed": 0, "unchanged": 8}
    Schedule.objects.filter(name="ormah:auto_cluster").update(minutes=5, func="old.path")
    Schedule.objects.create(name="ormah:retired_job", func="x.y", schedule_type=Schedule.MINUTES, minutes=1)
    assert schedules_sync() == {"created": 0, "updated": 1, "removed": 1, "unchanged": 7}
    assert sorted(Schedule.objects.filter(name__startswith="ormah:").values_list("func", "args", "minutes")) == sorted(
        ("maintenance.jobs.scheduled_job", repr((spec.name,)), spec.minutes) for spec in JOBS)
    assert tuple(ORDER) == SLEEP_CYCLE


def test_migrate_syncs_the_schedules(home, db):
    Schedule.objects.filter(name__startswith="ormah:").delete()
    emit_post_migrate_signal(verbosity=0, interactive=False, db="default")
    assert Schedule.objects.filter(name__startswith="ormah:").count() == 8


def test_a_second_mutating_job_is_busy_while_the_lock_is_held(no_llm, home, db):
    with held_elsewhere(get_conf().job_lock_file):
        busy, free = job_execute("auto_cluster"), job_execute("index_updater")
    assert (busy.status, busy.error, free.status) == ("busy", "Another maintenance job is running", "ok")
    assert JobRunRow.objects.get(job="auto_cluster").status == "busy"
    assert job_execute("auto_cluster").status == "ok"


def test_a_failing_job_is_recorded_with_its_error(no_llm, home, db, monkeypatch):
    def boom(ctx):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr("maintenance.services.upkeep.cluster_run", boom)
    outcome = job_execute("auto_cluster")
    assert (outcome.status, outcome.error) == ("error", "RuntimeError: disk on fire")
    assert JobRunRow.objects.get().error == "RuntimeError: disk on fire"


def test_the_time_bound_stops_a_job_as_partial(no_llm, remember, settings):
    remember("Ormah uses SQLite as the index of its markdown files")
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_JOB_TIME_LIMIT_SECONDS": 0.0}
    outcome = job_execute("duplicate_merger")
    assert (outcome.status, outcome.counts) == ("partial", {"candidates": 1})


def test_the_cli_runs_one_job_and_lists_tasks(no_llm, home, db, capsys):
    call_command("tasks", "run", "index_updater")
    assert capsys.readouterr().out.startswith("index_updater      ok")
    call_command("tasks", "list")
    assert "auto_cluster       every   60 min" in capsys.readouterr().out


def tidy_run(ctx):
    ctx.counts["tidied"] = 3


def test_a_job_registers_itself_once_and_everything_follows(no_llm, api, monkeypatch):
    monkeypatch.setattr(registry, "_JOBS", dict(registry._JOBS))  # the registered job goes away after the test
    maintenance_job("tidy_tags", every_minutes=30, cycle=75, description="Tidy tags")(tidy_run)
    assert schedules_sync() == {"created": 1, "updated": 0, "removed": 0, "unchanged": 8}
    assert Schedule.objects.get(name="ormah:tidy_tags").args == "('tidy_tags',)"
    assert [t["name"] for t in api.get("/api/admin/tasks").json()][-2:] == ["tidy_tags", "decay_manager"]
    assert scheduled_job("tidy_tags")["counts"] == {"tidied": 3}
    with pytest.raises(RuntimeError, match="Two maintenance jobs are named tidy_tags"):
        maintenance_job("tidy_tags", every_minutes=1, cycle=1, description="again")(lambda ctx: None)
