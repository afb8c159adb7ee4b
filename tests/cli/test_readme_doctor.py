"""The README names every check `ormah doctor` runs, each under what it does: fail or warn."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_names_every_doctor_check_as_failing_or_warning():
    source = (ROOT / "memory" / "management" / "commands" / "doctor.py").read_text()
    checks = re.findall(r'\("([a-z_]+)", [a-z_]+\)', source.split("results = [_check(", 1)[1].split("]]", 1)[0])
    assert len(checks) > 10
    readme = (ROOT / "README.md").read_text()
    paragraph = readme.split("`ormah doctor` prints one line per check", 1)[1].split("\n\n", 1)[0]
    fails, warns = paragraph.split("it warns (exit 0) on", 1)
    named = set(re.findall(r"`([a-z_]+)`", fails)) | set(re.findall(r"`([a-z_]+)`", warns))
    assert set(checks) - named == set()
    body = {name: source.split(f"def {fn}(", 1)[1].split("\n        def ", 1)[0]
            for name, fn in re.findall(r'\("([a-z_]+)", ([a-z_]+)\)', source)}
    warning = {name for name, text in body.items() if "Warning_(" in text}
    assert warning == {name for name in checks if f"`{name}`" in warns}
