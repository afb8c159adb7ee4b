"""A command prints its own output and errors; its INFO log records go to the log file only (`ormah backup`,
`restore` and `tasks run` printed theirs on the console above their output). Warnings still reach the console;
`ormah serve`'s console keeps every record (ormah_site/cli/django_boot.py)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.test_cli import ormah


def test_backup_restore_and_tasks_print_no_log_lines(tmp_path):
    home = tmp_path / "home"
    env = {"ORMAH_PORT": "1", "ORMAH_MODEL_CACHE_DIR": str(tmp_path / "models")}  # no server answers there
    assert ormah("init", "--quiet", "--name", "Tester", home=home, **env).returncode == 0
    backup = ormah("backup", home=home, **env)
    assert backup.returncode == 0, backup.stderr
    assert backup.stderr == ""
    assert backup.stdout.startswith("Backed up ")
    name = sorted(p.name for p in (home / "backups").iterdir())[-1]
    for args in (("restore", name), ("tasks", "run", "index_updater"), ("tasks", "run-all")):
        out = ormah(*args, home=home, **env)
        assert out.returncode == 0, out.stderr
        assert (args, out.stderr) == (args, "")
        assert out.stdout.strip()
    log = (home / "logs" / "ormah.log").read_text()
    assert f"INFO memory.services.backup Backup {name}" in log  # the file keeps what the console no longer shows
    assert "INFO maintenance.runner Job index_updater (cli): ok" in log


def test_console_shows_warnings_and_the_file_keeps_all(tmp_path):
    home = tmp_path / "home"
    (home / "logs").mkdir(parents=True)
    code = ("from ormah_site.cli.django_boot import django_setup\n"
            "django_setup()\n"
            "import logging\n"
            "logging.getLogger('memory.probe').info('quiet-info')\n"
            "logging.getLogger('memory.probe').warning('loud-warning')\n")
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "loud-warning" in out.stderr
    assert "quiet-info" not in out.stderr
    log = (home / "logs" / "ormah.log").read_text()
    assert "INFO memory.probe quiet-info" in log and "WARNING memory.probe loud-warning" in log
