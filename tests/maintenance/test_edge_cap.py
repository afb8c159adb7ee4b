"""auto_linker's `max_edges_per_run` holds within a chunk too: the cap was checked only between chunks of 16
memories, so one chunk of close memories wrote past it (a cap of 3 wrote 17 edges in one run)."""

from __future__ import annotations

from maintenance.models import JobStateRow, NodeSeenRow
from maintenance.runner import job_execute
from memory.models import EdgeRow

TOPICS = ["the SQLite index of the markdown files", "the Grafana dashboards of the billing service",
          "the nightly backup of the team server", "the release checklist for version two"]


def test_no_run_writes_more_edges_than_the_cap_and_later_runs_write_the_rest(no_llm, remember, settings):
    for topic in TOPICS:  # 12 memories: one chunk, three close ones per topic
        for text in (f"We decided {topic}.", f"We decided on {topic}", f"Note: we decided {topic}, finally"):
            remember(text, type="decision")
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_MAX_EDGES_PER_RUN": 3}
    runs = [job_execute("auto_linker") for _ in range(8)]
    edges = [run.counts.get("edges", 0) for run in runs]
    assert max(edges) == 3
    writing = [run.status for run in runs if run.counts.get("edges")]
    assert writing[:-1] == ["partial"] * (len(writing) - 1)  # stopped at the cap, the rest left for the next run
    assert runs[-1].counts == {"candidates": 0}  # every memory examined in the end
    assert sum(edges) == EdgeRow.objects.count() > 6
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_MAX_EDGES_PER_RUN": 500}
    NodeSeenRow.objects.filter(job="auto_linker").delete()  # examine every memory again: none was left unlinked
    JobStateRow.objects.filter(job="auto_linker").update(watermark=0)
    assert job_execute("auto_linker").counts.get("edges", 0) == 0
