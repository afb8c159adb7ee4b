"""docs/api.md's reference is generated from the live OpenAPI schema: every route, parameter and body field."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_reference_in_docs_api_is_up_to_date(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ORMAH_HOME": str(tmp_path), "DJANGO_SETTINGS_MODULE":
           "ormah_site.settings"}
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "api_reference.py"), "--check"], env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_the_reference_names_every_body_field_of_remember():
    text = (ROOT / "docs" / "api.md").read_text()
    section = text.split("### `POST /api/agent/remember`")[1].split("### ")[0]
    for field in ("content", "type", "tier", "space", "tags", "connections", "title", "about_self", "confidence",
                  "created", "session_id"):
        assert f"| `{field}`" in section, field
    assert "`GET /api/agent/nodes`" in text and "`POST /api/agent/proposals/{proposal_id}`" in text


def test_the_schema_carries_the_package_version():
    from ormah_site import __version__
    from ormah_site.api import api

    assert api.get_openapi_schema(path_params={})["info"]["version"] == __version__


def test_the_routes_table_lists_every_route_of_the_schema():
    """docs/api.md's hand-written "## Routes" table (the reference below it is generated) names every operation."""
    import re

    from ormah_site.api import api

    schema = api.get_openapi_schema(path_params={})
    operations = {(method.upper(), path) for path, methods in schema["paths"].items() for method in methods}
    assert len(operations) > 30
    table = (ROOT / "docs" / "api.md").read_text().split("## Routes", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `(GET|POST|PATCH|PUT|DELETE) (/api/[^` ]+)`", table, re.M))
    assert operations - listed == set()
    assert listed - operations == set()
