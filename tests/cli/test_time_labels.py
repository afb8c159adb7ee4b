"""Times shown to people are labelled UTC (fix4, session 21): the CLI's human output and the web UI's visible text.
The API's JSON and the agent-facing text formats (recall's text, whisper, MCP) are not touched (docs/security.md)."""

from __future__ import annotations

import io
import re

from django.core.management import call_command

from ormah_site.cli import render

_NODE = {"type": "fact", "title": "Boiler", "id": "00000001-0000-4000-8000-000000000000", "tier": "working",
         "space": None, "tags": [], "content": "serviced in March", "connections": [],
         "created": "2026-11-29T15:20:00+02:00", "valid_until": "2026-12-01T00:00:00+00:00"}


def test_cli_node_text_labels_its_times_utc():
    text = render.node_text(_NODE)
    assert "Created: 2026-11-29 13:20 UTC" in text  # +02:00 carried to UTC
    assert "Outdated since 2026-12-01 00:00 UTC" in text


def test_show_in_process_labels_its_times_utc(mem):
    node = mem("the boiler is serviced in March", auto_link=False)
    out = io.StringIO()
    call_command("show", node.id, stdout=out)
    assert re.search(r"Created: \d{4}-\d\d-\d\d \d\d:\d\d UTC\b", out.getvalue()), out.getvalue()

