"""docs/architecture.md's layout names every module and package of memory, maintenance and ormah_site (whisper's
are in docs/whisper.md, "Layout"), so a new engineer finds each one there."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SKIP = {"__init__", "apps", "admin", "migrations", "management", "__pycache__"}


def test_every_module_of_the_apps_is_named_in_the_architecture_doc():
    doc = (ROOT / "docs" / "architecture.md").read_text()
    unnamed = []
    for app in ("memory", "maintenance", "ormah_site"):
        for path in sorted((ROOT / app).iterdir()):
            if path.is_dir() and (path / "__init__.py").exists() and path.name not in SKIP:
                shown = path.name + "/"
            elif path.suffix == ".py" and path.stem not in SKIP:
                shown = path.name
            else:
                continue
            if not re.search(r"(?<![\w.])" + re.escape(shown), doc) and f"{app}.{path.stem}" not in doc:
                unnamed.append(f"{app}/{shown}")
    assert unnamed == []
