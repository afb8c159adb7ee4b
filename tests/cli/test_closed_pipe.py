"""A command whose reader went away (`ormah recall x | head -1`, a pager quit early) ends quietly: what it did stays
done, no traceback, and the exit code a shell gives a program SIGPIPE ended (141). Every command printed a
BrokenPipeError traceback before (session 26, review15)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.cli.test_cli import ormah


def ormah_into_closed_pipe(*args, home, **env) -> subprocess.CompletedProcess:
    """Run `ormah ARGS` with its stdout a pipe whose read end is already closed: its first write fails (EPIPE)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        full = {**os.environ, "ORMAH_API_TOKEN": "", "ORMAH_HOME": str(home), **env}
        full.pop("ORMAH_DB_PATH", None)
        return subprocess.run([sys.executable, "-m", "ormah_site.cli", *args], env=full, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write_end)


def test_a_closed_pipe_ends_a_command_quietly_and_keeps_what_it_did(tmp_path):
    home = tmp_path / "home"
    env = {"ORMAH_PORT": "1", "ORMAH_MODEL_CACHE_DIR": str(tmp_path / "models")}  # no server answers there
    assert ormah("init", "--quiet", "--name", "Tester", home=home, **env).returncode == 0
    # a thin command (the API in-process; its answer printed by ormah_site.cli) and a Django command (doctor)
    remember = ormah_into_closed_pipe("remember", "The boiler was serviced in March", "--title", "Boiler", home=home,
                                      **env)
    doctor = ormah_into_closed_pipe("doctor", home=home, **env)
    for out in (remember, doctor):
        assert "Traceback" not in out.stderr and "BrokenPipeError" not in out.stderr, out.stderr
        assert out.returncode == 141, out.stderr
    assert [p.name for p in (home / "memory" / "nodes").glob("fact_boiler_*.md")]  # remembered all the same
    recalled = ormah("recall", "boiler service", "--json", home=home, **env)
    assert recalled.returncode == 0 and "The boiler was serviced in March" in recalled.stdout
