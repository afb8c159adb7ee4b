"""Live processes on a temporary home: a real qcluster fires a schedule; web writes during a running sleep cycle."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
from datetime import datetime
from pathlib import Path

import httpx
import pytest

from tests.maintenance.live import varied
from tests.support.ports import free_port, listening, wait_until

ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(ROOT / "manage.py")
TOKEN = "live-test-token"


def env_for(home: Path, settings_module: str = "ormah_site.settings") -> dict:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": settings_module,
           "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_API_TOKEN": TOKEN, "ORMAH_LLM_PROVIDER": "none",
           "ORMAH_MODEL_CACHE_DIR": str(Path(tempfile.gettempdir()) / "ormah-test-models"), "PYTHONPATH": str(ROOT)}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE"):
        env.pop(key, None)
    return env


def helper(env: dict, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-m", "tests.maintenance.live", *args], env=env, cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def query(db: Path, sql: str, params=()) -> list:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def stop(proc: subprocess.Popen) -> None:
    """SIGTERM to the process (it stops its own children), then the whole group if it lingers."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@pytest.mark.slow
def test_a_real_qcluster_fires_the_auto_cluster_schedule(tmp_path):
    home = tmp_path / "home"
    # plumbing only (a schedule fires in a real cluster): the deterministic fake embedder spares two model loads
    env = env_for(home, "tests.maintenance.live_settings") | {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
    loose = helper(env, "cluster-scene")["loose"]
    db = home / "index.sqlite3"
    cluster = subprocess.Popen([sys.executable, MANAGE, "qcluster"], env=env, cwd=ROOT, start_new_session=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        indexed = wait_until(lambda: query(db, "SELECT space FROM memory_noderow WHERE uid = ?", (loose,))
                             == [("billing",)], 120)
    finally:
        stop(cluster)
    assert indexed
    [path] = (home / "memory" / "nodes").glob(f"*_{loose[:8]}.md")
    assert "space: billing\n" in path.read_text()
    assert query(db, "SELECT job, trigger, status FROM maintenance_jobrunrow") == [("auto_cluster", "schedule", "ok")]
    assert query(db, "SELECT repeats, next_run > datetime('now', '+50 minutes') FROM django_q_schedule "
                     "WHERE name = 'ormah:auto_cluster'") == [(-1, 1)]


@pytest.mark.slow
def test_web_writes_during_a_running_sleep_cycle_are_never_lost_or_locked(tmp_path):
    home = tmp_path / "home"
    env = env_for(home)
    helper(env, "store", "40")
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(port), "--no-cluster", "--no-watch"],
                              env=env, cwd=ROOT, start_new_session=True, stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}/api"
    headers = {"Authorization": f"Bearer {TOKEN}"}
    cycles, writes, failures = [], [], []
    writers_done = threading.Event()

    def sleep_cycles():
        with httpx.Client(base_url=base, headers=headers, timeout=120) as client:
            while not writers_done.is_set() or not cycles:
                cycles.append(client.post("/admin/tasks/run-all"))

    def writer(n: int):
        rng = random.Random(n)
        with httpx.Client(base_url=base, headers=headers, timeout=60) as client:
            for i in range(8):
                content = varied(rng, f"writer {n} note {i}")
                response = client.post("/agent/remember", json={"content": content})
                (writes if response.status_code == 201 else failures).append((content, response))

    try:
        assert wait_until(lambda: listening(port), 60, 0.1), "server did not start"
        cycle_thread = threading.Thread(target=sleep_cycles)
        cycle_thread.start()
        assert wait_until(lambda: query(home / "index.sqlite3", "SELECT count(*) FROM maintenance_jobrunrow "
                                        "WHERE finished_at IS NULL") != [(0,)], 30, 0.05), "no cycle started"
        threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        writers_done.set()
        cycle_thread.join(timeout=180)
    finally:
        stop(server)
        log.close()
    assert [(r.status_code, r.text[:200]) for _, r in failures] == []
    assert len(writes) == 32
    assert all(c.status_code == 200 for c in cycles)
    outcomes = [(o["job"], o["status"], o["error"]) for c in cycles for o in c.json()]
    assert [o for o in outcomes if o[1] not in ("ok", "partial")] == []
    assert outcomes[2][0] == "duplicate_merger" and cycles[0].json()[2]["counts"]["merged"] == 1
    db = home / "index.sqlite3"
    for content, response in writes:
        node_id = response.json()["node"]["id"]
        assert query(db, "SELECT content FROM memory_noderow WHERE uid = ?", (node_id,)) == [(content,)]
        [path] = (home / "memory" / "nodes").glob(f"*_{node_id[:8]}.md")
        assert content in path.read_text()
    assert "database is locked" not in (tmp_path / "serve.log").read_text()
    runs = [(datetime.fromisoformat(a), datetime.fromisoformat(b)) for a, b in query(
        db, "SELECT started_at, finished_at FROM maintenance_jobrunrow WHERE job != 'index_updater'")]
    created = [datetime.fromisoformat(c) for (c,) in query(
        db, f"SELECT created FROM memory_noderow WHERE uid IN ({','.join('?' * len(writes))})",
        [r.json()["node"]["id"] for _, r in writes])]
    during = [c for c in created if any(a <= c <= b for a, b in runs)]
    assert len(during) >= len(created) // 2  # most writes landed while a mutating job was running
