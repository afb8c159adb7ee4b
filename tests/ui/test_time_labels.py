"""The web UI's visible times are labelled UTC (fix4, session 21); the <time datetime> attribute keeps the offset."""

from __future__ import annotations

import re


def test_node_panel_labels_its_times_utc(ui, mem):
    node = mem("the boiler is serviced in March", auto_link=False)
    html = ui.get(f"/nodes/{node.id}/", HTTP_HX_REQUEST="true").content.decode()
    shown = re.findall(r"<time datetime=\"[^\"]+\">([^<]+)</time>", html)
    assert len(shown) >= 3 and all(s.endswith(" UTC") for s in shown), shown
