"""A real `ormah serve` for the tests that drive the thin CLI against it: a fresh home, `ormah init`, the server on a
free loopback port (no cluster, no watcher), stopped with its process group when the test module is done."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.ports import free_port, listening, wait_until

# Variables of the caller's environment that would point the child at another home, database or server.
FOREIGN = ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_URL", "ORMAH_SPACE")


@contextmanager
def served_home(home: Path) -> Iterator[dict[str, str]]:
    """The environment of a CLI talking to a server that serves `home`; the server stops when the block ends."""
    port = free_port()
    env = {**os.environ, "ORMAH_HOME": str(home), "ORMAH_PORT": str(port), "ORMAH_LOG_LEVEL": "WARNING",
           "ORMAH_API_TOKEN": "", "DJANGO_SETTINGS_MODULE": "ormah_site.settings"}
    for key in FOREIGN:
        env.pop(key, None)
    subprocess.run([sys.executable, "-m", "ormah_site.cli", "init", "--quiet"], env=env, check=True, timeout=300)
    proc = subprocess.Popen([sys.executable, "-m", "ormah_site.cli", "serve", "--no-cluster", "--no-watch"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    wait_until(lambda: listening(port), 120, 0.2)
    try:
        yield env
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)


def serve_stopped(home: Path, **env: str) -> subprocess.CompletedProcess:
    """`manage.py serve` on `home` (SQLite) with `env` added, for a setting its system checks refuse: it must stop
    before it serves (port 1, which it never gets to bind)."""
    child = {**{k: v for k, v in os.environ.items() if k != "ORMAH_DATABASE_URL"}, "ORMAH_HOME": str(home),
             "DJANGO_SETTINGS_MODULE": "ormah_site.settings", **env}
    return subprocess.run([sys.executable, "manage.py", "serve", "--port", "1"], env=child, capture_output=True,
                          text=True, timeout=60)
