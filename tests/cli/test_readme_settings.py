"""Every ORMAH_* variable the settings read is in the README's configuration tables (a row may shorten a family:
`ORMAH_WHISPER_AFFINITY_SIMILARITY` / `_HALF_LIFE_DAYS`)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_variable_the_settings_read_is_in_the_readme():
    settings = (ROOT / "ormah_site" / "settings.py").read_text()
    read = {f"ORMAH_{name}" for name in re.findall(r'_env(?:_path|_bool|_float|_int)?\("([A-Z0-9_]+)"', settings)}
    assert len(read) > 50
    readme = (ROOT / "README.md").read_text()
    named = set(re.findall(r"`(ORMAH_[A-Z0-9_]+)`", readme))
    for full, tails in re.findall(r"`(ORMAH_[A-Z0-9_]+)`((?: / `_[A-Z0-9_]+`)+)", readme):  # `ORMAH_X_Y` / `_Z`
        named |= {full.rsplit("_", 1)[0] + tail for tail in re.findall(r"`(_[A-Z0-9_]+)`", tails)}
    assert read - named == set()


def test_on_the_server_side_only_the_settings_read_ormah_variables():
    """docs/architecture.md: settings.py is the server's one reader (ORMAH_SQLITE_DRIVER aside, read by the backend
    it picks the driver for); the Django-free clients (the CLI's thin path, the hook, setup) read their own."""
    clients = {"ormah_site/settings.py", "ormah_site/sqlitevec/base.py", "whisper/hook.py", "whisper/claude_settings.py"}
    readers = []
    for app in ("memory", "whisper", "maintenance", "ormah_site"):
        for path in sorted((ROOT / app).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel in clients or rel.startswith("ormah_site/cli/"):
                continue
            if re.search(r"(environ\.get|environ\[|getenv)\(?\s*[\"']ORMAH_", path.read_text()):
                readers.append(rel)
    assert readers == []
