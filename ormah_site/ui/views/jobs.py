"""The jobs dashboard: schedules, states and runs; run one job now, the sleep cycle, pause and resume.

Jobs are queued to the django-q2 cluster (the one `ormah serve` runs), so a long sleep cycle never ties up a web
worker.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_q.tasks import async_task

from maintenance.runner import job_pause
from maintenance.schedules import JOBS_BY_NAME
from memory.domain.node import utcnow
from memory.errors import OrmahError
from ormah_site.ui.http import is_htmx
from ormah_site.ui.view_models.jobs import SLEEP_CYCLE_NAME, jobs_dashboard

QUEUE_KEY = "ormah_jobs_queued"


def _queued(request: HttpRequest) -> dict[str, datetime]:
    return {k: datetime.fromisoformat(v) for k, v in request.session.get(QUEUE_KEY, {}).items()}


def _dashboard_response(request: HttpRequest, template: str, *, notice: str | None = None,
                        error: str | None = None) -> HttpResponse:
    dashboard = jobs_dashboard(now=utcnow(), queued=_queued(request))
    request.session[QUEUE_KEY] = {k: v.isoformat() for k, v in dashboard.queued.items()}
    return render(request, template, {"d": dashboard, "notice": notice, "error": error})


@login_required
@require_GET
def jobs_page(request: HttpRequest) -> HttpResponse:
    """The eight jobs: schedule, state, last run (result, duration, errors); run one now or the sleep cycle."""
    return _dashboard_response(request, "maintenance/jobs.html")


@login_required
@require_GET
def jobs_table(request: HttpRequest) -> HttpResponse:
    """The dashboard body, polled every two seconds while something is queued or running."""
    return _dashboard_response(request, "maintenance/_jobs_table.html")


def _enqueue(request: HttpRequest, key: str, func: str, *args, **kwargs) -> None:
    queued = request.session.get(QUEUE_KEY, {})
    queued[key] = utcnow().isoformat()
    request.session[QUEUE_KEY] = queued
    async_task(func, *args, task_name=f"ormah-ui:{key}", **kwargs)


@login_required
@require_POST
def job_run(request: HttpRequest, name: str) -> HttpResponse:
    """Queue one job to run now on the job cluster."""
    if name not in JOBS_BY_NAME:
        return _dashboard_response(request, "maintenance/_jobs_table.html", error=f"No job named {name}")
    _enqueue(request, name, "maintenance.runner.job_execute", name, trigger="ui")
    if not is_htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", notice=f"{name} queued.")


@login_required
@require_POST
def sleep_cycle(request: HttpRequest) -> HttpResponse:
    """Queue the sleep cycle: every job once, in order."""
    _enqueue(request, SLEEP_CYCLE_NAME, "maintenance.runner.sleep_cycle_run", trigger="ui")
    if not is_htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", notice="Sleep cycle queued.")


@login_required
@require_POST
def job_pause_toggle(request: HttpRequest, name: str) -> HttpResponse:
    """Pause or resume a job's schedule (a manual run still works)."""
    error = None
    try:
        job_pause(name, paused=request.POST.get("paused") == "1")
    except OrmahError as exc:
        error = exc.message
    if not is_htmx(request):
        return redirect("ui:jobs")
    return _dashboard_response(request, "maintenance/_jobs_table.html", error=error)
