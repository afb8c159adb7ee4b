"""The jobs screen's last-run badge (session 23, review12): a run closed as interrupted (its process killed mid-run,
maintenance/processes.py) carries the warning style failed and busy runs carry, and so does one left open a day
(abandoned); an ok or partial run does not."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from maintenance.models import JobRunRow
from memory.domain.node import utcnow


@pytest.mark.parametrize("status, warned", [("interrupted", True), ("abandoned", True), ("error", True), ("busy", True),
                                            ("ok", False), ("partial", False)])
def test_the_last_run_badge_warns_when_the_run_did_not_finish_well(ui, db, status, warned):
    now = utcnow()
    JobRunRow.objects.create(job="conflict_detector", trigger="schedule", started_at=now - timedelta(minutes=5),
                             finished_at=now - timedelta(minutes=4), status=status)
    html = ui.get("/jobs/").content.decode()
    row = re.search(r'<tr data-job="conflict_detector".*?</tr>', html, re.S).group(0)
    badge = re.search(rf'<span class="(badge[^"]*)">{status}</span>', row)
    assert badge and (badge.group(1) == "badge warn") is warned
