"""URL map: the admin, the REST API, static files and the web UI."""

from django.contrib import admin
from django.contrib.staticfiles.views import serve as static_serve
from django.urls import include, path, re_path
from django.views.decorators.cache import cache_control

from maintenance import views as maintenance_views
from memory import views as memory_views
from ormah_site import views as site_views
from ormah_site.api import api
from whisper import views as whisper_views

ui_patterns = [
    path("", memory_views.graph_page, name="graph"),
    path("graph/data/", memory_views.graph_data, name="graph-data"),
    path("graph/nodes/<str:uid>/", memory_views.graph_neighbourhood_data, name="graph-neighbourhood"),
    path("search/", memory_views.search, name="search"),
    path("nodes/suggest/", memory_views.node_suggestions, name="node-suggest"),
    path("nodes/<str:uid>/", memory_views.node_panel, name="node"),
    path("nodes/<str:uid>/edit/", memory_views.node_edit, name="node-edit"),
    path("nodes/<str:uid>/connect/", memory_views.node_connect, name="node-connect"),
    path("nodes/<str:uid>/outdated/", memory_views.node_outdated, name="node-outdated"),
    path("nodes/<str:uid>/tier/", memory_views.node_tier, name="node-tier"),
    path("nodes/<str:uid>/forget/", memory_views.node_forget, name="node-forget"),
    path("nodes/<str:uid>/restore/", memory_views.node_restore, name="node-restore"),
    path("stats/", memory_views.stats_page, name="stats"),
    path("proposals/", maintenance_views.proposals_page, name="proposals"),
    path("proposals/bulk/", maintenance_views.proposals_bulk, name="proposals-bulk"),
    path("proposals/node/<str:uid>/", maintenance_views.node_proposals, name="node-proposals"),
    path("proposals/<str:proposal_id>/decide/", maintenance_views.proposal_decision, name="proposal-decide"),
    path("merges/<str:merge_id>/undo/", maintenance_views.merge_undo_view, name="merge-undo"),
    path("jobs/", maintenance_views.jobs_page, name="jobs"),
    path("jobs/table/", maintenance_views.jobs_table, name="jobs-table"),
    path("jobs/sleep-cycle/", maintenance_views.sleep_cycle, name="jobs-sleep-cycle"),
    path("jobs/<str:name>/run/", maintenance_views.job_run, name="job-run"),
    path("jobs/<str:name>/pause/", maintenance_views.job_pause_toggle, name="job-pause"),
    path("whisper/", whisper_views.whisper_page, name="whisper"),
    path("whisper/<int:decision_id>/feedback/", whisper_views.whisper_feedback, name="whisper-feedback"),
]

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    path("login/", site_views.login, name="login"),
    path("logout/", site_views.logout, name="logout"),
    # Static files are served by Django itself (also under gunicorn): Ormah is a local, single-user app, and
    # the browser revalidates (If-Modified-Since) instead of keeping stale UI code.
    re_path(r"^static/(?P<path>.*)$", cache_control(no_cache=True)(static_serve), {"insecure": True}),
    path("", include((ui_patterns, "ui"))),
]
