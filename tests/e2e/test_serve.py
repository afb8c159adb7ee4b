"""`ormah serve` end to end: gunicorn + job cluster + watcher on a temporary home, driven from the CLI."""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.faults.support import children, cmdline
from tests.support import pg_databases
from tests.support.ports import free_port, listening, wait_until

ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(ROOT / "manage.py")


def index_rows(db: Path, sql: str, params=()):
    if pg_databases.ON_POSTGRES:  # the home's own database (make test-pg)
        import psycopg

        url = pg_databases.child_env(db.parent)["ORMAH_DATABASE_URL"]
        with psycopg.connect(url, connect_timeout=10) as conn:
            return conn.execute(sql.replace("?", "%s"), params).fetchall()
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


@pytest.fixture
def served(tmp_path):
    home = tmp_path / "home"
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_API_TOKEN": ""}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE"):
        env.pop(key, None)
    env.update(pg_databases.child_env(home))  # on PostgreSQL: a database of its own; nothing on SQLite
    subprocess.run([sys.executable, MANAGE, "init", "--name", "Robin", "--quiet"], env=env, check=True, timeout=120)
    port = free_port()
    proc = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)

    assert wait_until(lambda: listening(port), 60), "server did not start"
    yield env, home, port, proc
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    pg_databases.drop_created()


def watching(session: int) -> bool:
    """Whether a process of the server's session holds an inotify instance: the watcher has run its catch-up sync
    (which loads the model first, seconds on a busy machine) and started observing the node folder."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.getsid(int(entry)) != session:
                continue
            fds = os.listdir(f"/proc/{entry}/fd")
            if any(os.readlink(f"/proc/{entry}/fd/{fd}") == "anon_inode:inotify" for fd in fds):
                return True
        except OSError:
            continue
    return False


def cli(env, *args) -> str:
    out = subprocess.run([sys.executable, MANAGE, *args], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.slow
def test_serve_remember_about_self_manual_edits_and_clean_stop(served):
    env, home, port, proc = served
    db = home / "index.sqlite3"
    assert oct((home / "api_token").stat().st_mode & 0o777) == "0o600"

    # the web master forked its workers holding one thread: the model it loaded first starts no pool that the
    # workers would lack (ormah_site.gunicorn_conf)
    master = wait_until(lambda: next((p for p in children(proc.pid) if "gunicorn" in cmdline(p)), None), 60)
    assert wait_until(lambda: children(master), 60), "the web master forked no worker"
    assert len(os.listdir(f"/proc/{master}/task")) == 1

    node_id = json.loads(cli(env, "remember", "I prefer tabs over spaces", "--about-self", "--json"))["id"]
    files = list((home / "memory" / "nodes").glob(f"*_{node_id[:8]}.md"))
    assert len(files) == 1
    defines = index_rows(db, "SELECT s.is_self, e.edge_type FROM memory_edgerow e "
                             "JOIN memory_noderow s ON s.id = e.source_id JOIN memory_noderow t ON t.id = e.target_id "
                             "WHERE t.uid = ?", (node_id,))
    assert (1, "defines") in defines

    # a manual edit is indexed by the watcher once it observes the folder (about a second on an idle machine; the
    # bounds only stop a hang: a test does not time, and this suite shares two cores with Chromium and job clusters)
    assert wait_until(lambda: watching(proc.pid), 120), "no process of the server watches the node folder"
    path = files[0]
    path.write_text(path.read_text().replace("I prefer tabs over spaces", "I prefer spaces over tabs, since 2026"))
    edited = wait_until(lambda: index_rows(db, "SELECT content FROM memory_noderow WHERE uid = ?", (node_id,))
                        == [("I prefer spaces over tabs, since 2026",)], 120)
    assert edited
    hits = index_rows(db, "SELECT uid FROM memory_noderow WHERE fts @@ websearch_to_tsquery('english', 'since')"
                      if pg_databases.ON_POSTGRES else
                      "SELECT n.uid FROM node_fts JOIN memory_noderow n ON n.id = node_fts.rowid "
                      "WHERE node_fts MATCH 'since'")
    assert hits == [(node_id,)]

    # a manual delete leaves the index
    path.unlink()
    assert wait_until(lambda: index_rows(db, "SELECT count(*) FROM memory_noderow WHERE uid = ?", (node_id,))
                      == [(0,)], 120)

    # Ctrl-C stops the web server and the job cluster cleanly: each part stops its own children, none waits out the
    # grace period (a SIGTERM to the cluster's whole group deadlocked its main until the 15 s kill)
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=60) == 0
    said = proc.stdout.read()
    assert "did not stop" not in said and "Ormah stopped." in said, said
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0
