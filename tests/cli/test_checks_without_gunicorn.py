"""The system checks every Django process registers (ormah_site.checks) do not import gunicorn: ORMAH_WEB_SOCKETS'
values live in ormah_site.web_sockets, which the checks and the gunicorn config both import; before, the checks
imported them from ormah_site.gunicorn_conf, and with it gunicorn's threaded worker, in every CLI command, job
cluster and test process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from ormah_site import gunicorn_conf
from ormah_site.checks import check_web_sockets
from ormah_site.web_sockets import WEB_SOCKETS

ROOT = Path(__file__).resolve().parents[2]
PROBE = ("import sys, django; django.setup(); from django.core.checks import run_checks; run_checks(); "
         "import ormah_site.checks; print(sorted(m for m in sys.modules if m.split('.')[0] == 'gunicorn'))")


def test_django_and_its_checks_load_without_gunicorn(tmp_path):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "ormah_site.settings", "ORMAH_HOME": str(tmp_path / "home")}
    env.pop("ORMAH_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_the_check_and_the_master_allow_the_same_values(settings):
    assert gunicorn_conf.WEB_SOCKETS is WEB_SOCKETS == ("shared", "per-worker")
    for value in WEB_SOCKETS:
        settings.ORMAH = {**settings.ORMAH, "WEB_SOCKETS": value}
        assert check_web_sockets() == []
