"""The jobs dashboard (runs through the django-q2 queue; the run ledger says what happened)."""

from __future__ import annotations

import pytest

from maintenance.models import JobRunRow
from memory.domain.node import utcnow
from tests.ui.conftest import csrf_post


def test_jobs_dashboard_lists_the_eight_jobs(ui, db):
    html = ui.get("/jobs/").content.decode()
    for name in ("auto_linker", "decay_manager", "conflict_detector", "duplicate_merger", "auto_cluster",
                 "consolidator", "importance_scorer", "index_updater"):
        assert f'data-job="{name}"' in html
    assert 'data-busy="0"' in html


def test_run_now_queues_the_job_and_the_dashboard_polls_until_it_ran(ui, mem, monkeypatch):
    mem("Something to score", auto_link=False)
    response = csrf_post(ui, "/jobs/importance_scorer/run/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "importance_scorer queued." in html
    assert 'data-busy="1"' in html and 'hx-trigger="every 2s"' in html  # no cluster here: it waits
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)
    csrf_post(ui, "/jobs/importance_scorer/run/")
    run = JobRunRow.objects.get(job="importance_scorer")
    assert (run.trigger, run.status) == ("ui", "ok")
    html = ui.get("/jobs/table/", HTTP_HX_REQUEST="true").content.decode()
    assert 'data-busy="0"' in html
    assert 'data-job="importance_scorer" data-state="idle" data-last-status="ok"' in html


def test_sleep_cycle_reports_progress_and_finishes(ui, mem, monkeypatch):
    mem("Something to maintain", auto_link=False)
    monkeypatch.setattr("django_q.conf.Conf.SYNC", True)
    html = csrf_post(ui, "/jobs/sleep-cycle/").content.decode()  # runs inline in sync mode
    assert "Sleep cycle queued." in html
    assert JobRunRow.objects.filter(trigger="ui").count() == 8
    assert 'data-busy="0"' in html and "— done" in html


def test_pause_and_resume_a_job(ui, db):
    html = csrf_post(ui, "/jobs/auto_cluster/pause/", {"paused": "1"}).content.decode()
    assert "paused</span>" in html
    html = csrf_post(ui, "/jobs/auto_cluster/pause/", {"paused": "0"}).content.decode()
    assert "paused</span>" not in html


@pytest.mark.parametrize("path", ["/inbox/", "/proposals/", "/jobs/", "/jobs/table/"])
def test_maintenance_screens_need_sign_in(client, db, path):
    assert client.get(path).status_code == 302


def test_dashboard_counts_sleep_cycle_progress_from_the_run_ledger(db):
    from datetime import timedelta

    from ormah_site.ui.view_models.jobs import jobs_dashboard

    now = utcnow()
    queued_at = now - timedelta(seconds=30)
    for i, job in enumerate(("importance_scorer", "index_updater", "duplicate_merger")):
        start = queued_at + timedelta(seconds=i + 1)
        JobRunRow.objects.create(job=job, trigger="ui", status="ok", started_at=start,
                                 finished_at=start + timedelta(milliseconds=500))
    JobRunRow.objects.create(job="conflict_detector", trigger="ui", status="running",
                             started_at=queued_at + timedelta(seconds=5))
    d = jobs_dashboard(now=now, queued={"sleep_cycle": queued_at})
    assert d.sleep_done == 3 and d.busy is True
    assert {j.name: j.state for j in d.jobs}["conflict_detector"] == "running"
    assert [r.seconds for r in d.runs if r.job == "index_updater"] == [0.5]
