"""ORMAH_WHISPER_PROJECT_PASS reaches whisper's conf (whisper.conf.get_conf().project_pass) as a boolean read by the
settings' boolean reader: "false" turns the per-project pass off (docs/whisper.md, "The per-project pass"). Before,
the settings never defined WHISPER_PROJECT_PASS, so no environment variable changed it. Each value in a fresh
process, since the settings read the environment once, at import."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = "import django; django.setup(); from whisper.conf import get_conf; print(get_conf().project_pass)"


@pytest.mark.parametrize(("value", "expected"), [(None, "True"), ("false", "False"), ("0", "False"),
                                                  ("true", "True")])
def test_the_project_pass_follows_its_environment_variable(tmp_path, value, expected):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ormah_site.settings", "ORMAH_HOME": str(tmp_path / "home")}
    env.pop("ORMAH_DATABASE_URL", None)
    env.pop("ORMAH_WHISPER_PROJECT_PASS", None)
    if value is not None:
        env["ORMAH_WHISPER_PROJECT_PASS"] = value
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == expected
