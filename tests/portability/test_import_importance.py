"""A vault import writes each new note's importance as the formula gives it at the degree importance_scorer counts
once the import is indexed (memory/services/note_import.py), also when the vault holds a note that is skipped (its
memory's file went missing) and links that name no note: the next importance_scorer run finds nothing to change.
Real files, index, MiniLM and the real job.

On the old code the runbook's link to the skipped note counted (the index still held that memory's row while the
import ran; its sync then dropped it): written 0.4803 at degree 3, rewritten to 0.4484 at degree 2 by the scorer."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta

from maintenance.runner import job_execute
from memory import runtime
from memory.domain.requests import NodeCreate
from memory.models import NodeRow
from memory.services import node_create
from memory.services.importing import notes_import


def degree(uid: str) -> int:
    row = NodeRow.objects.get(uid=uid)
    return row.out_edges.count() + row.in_edges.count()


def files_of(uids: list[str]) -> dict[str, tuple[bytes, int]]:
    store = runtime.store()
    return {uid: (store.path_for(uid).read_bytes(), os.stat(store.path_for(uid)).st_mtime_ns) for uid in uids}


def test_the_importance_written_at_import_is_what_the_next_importance_scorer_run_computes(home, db, settings,
                                                                                          tmp_path):
    settings.ORMAH = {**settings.ORMAH, "LLM_PROVIDER": "none"}
    # another memory keeps the folder from being emptied whole (tests/maintenance/test_creation_importance.py)
    node_create(request=NodeCreate(content="The team deploys on Thursdays"), auto_link=False)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "plan.md").write_text("# Plan\n\nThe migration plan is in the wiki.\n")
    plan = notes_import(folder=notes).imported[0]
    runtime.store().path_for(plan).unlink()  # its file went missing: re-importing the edited note is skipped
    (notes / "plan.md").write_text("# Plan\n\nThe migration plan follows [[runbook]] and [[oncall]].\n")
    (notes / "runbook.md").write_text(
        "# Runbook\n\nRestart billing with systemctl after the [[plan]]; page [[oncall]]; see [[Missing Note]].\n")
    (notes / "oncall.md").write_text("# Oncall\n\nThe oncall rota is in the wiki; the [[runbook]] says when.\n")
    (notes / "faq.md").write_text("# FAQ\n\nAsk in the channel; nothing here links to [[Nowhere]].\n")

    report = notes_import(folder=notes)

    assert [p.rsplit("/", 1)[-1] for p, _ in report.skipped] == ["plan.md"]
    assert sorted(target for _, target in report.unresolved) == ["Missing Note", "Nowhere"]
    fresh = {NodeRow.objects.get(uid=u).title: u for u in report.imported}
    assert sorted(fresh) == ["FAQ", "Oncall", "Runbook"]
    assert not NodeRow.objects.filter(uid=plan).exists()  # no file, no row once the import has synced
    # runbook: out to oncall, in from oncall (its links to the skipped plan and to "Missing Note" lead nowhere)
    assert {title: degree(u) for title, u in fresh.items()} == {"FAQ": 0, "Oncall": 2, "Runbook": 2}
    assert {title: NodeRow.objects.get(uid=u).importance for title, u in fresh.items()} == {
        "FAQ": 0.33, "Oncall": 0.4491, "Runbook": 0.4491}
    before = files_of(list(fresh.values()))
    outcome = job_execute("importance_scorer", now=datetime.now(UTC) + timedelta(hours=1))
    assert (outcome.status, outcome.counts) == ("ok", {"changed": 0})
    assert files_of(list(fresh.values())) == before
