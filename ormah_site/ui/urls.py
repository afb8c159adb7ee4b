"""URLs of the web UI (namespace "ui"); the site includes them at its root."""

from django.urls import path

from ormah_site.ui.views import graph, inbox, jobs, nodes, review, stats, whisper

app_name = "ui"

urlpatterns = [
    path("", graph.graph_page, name="graph"),
    path("graph/data/", graph.graph_data, name="graph-data"),
    path("graph/positions/", graph.graph_positions, name="graph-positions"),
    path("graph/nodes/<str:uid>/", graph.graph_neighbourhood_data, name="graph-neighbourhood"),
    path("search/", graph.search, name="search"),
    path("nodes/suggest/", nodes.node_suggestions, name="node-suggest"),
    path("nodes/<str:uid>/", nodes.node_panel, name="node"),
    path("nodes/<str:uid>/edit/", nodes.node_edit, name="node-edit"),
    path("nodes/<str:uid>/connect/", nodes.node_connect, name="node-connect"),
    path("nodes/<str:uid>/outdated/", nodes.node_outdated, name="node-outdated"),
    path("nodes/<str:uid>/tier/", nodes.node_tier, name="node-tier"),
    path("nodes/<str:uid>/forget/", nodes.node_forget, name="node-forget"),
    path("nodes/<str:uid>/restore/", nodes.node_restore, name="node-restore"),
    path("stats/", stats.stats_page, name="stats"),
    path("inbox/", inbox.inbox_page, name="inbox"),
    path("inbox/decide/", inbox.inbox_decide, name="inbox-decide"),
    path("inbox/<str:proposal_id>/edit/", inbox.inbox_edit, name="inbox-edit"),
    path("inbox/<str:proposal_id>/card/", inbox.inbox_card, name="inbox-card"),
    path("undo/", inbox.undo_view, name="undo"),
    path("proposals/", inbox.proposals_redirect, name="proposals"),
    path("proposals/node/<str:uid>/", review.node_proposals, name="node-proposals"),
    path("merges/<str:merge_id>/undo/", review.merge_undo_view, name="merge-undo"),
    path("jobs/", jobs.jobs_page, name="jobs"),
    path("jobs/table/", jobs.jobs_table, name="jobs-table"),
    path("jobs/sleep-cycle/", jobs.sleep_cycle, name="jobs-sleep-cycle"),
    path("jobs/<str:name>/run/", jobs.job_run, name="job-run"),
    path("jobs/<str:name>/pause/", jobs.job_pause_toggle, name="job-pause"),
    path("whisper/", whisper.whisper_page, name="whisper"),
    path("whisper/<int:decision_id>/feedback/", whisper.whisper_feedback, name="whisper-feedback"),
]
