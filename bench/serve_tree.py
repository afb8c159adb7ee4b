"""A real `ormah serve` for the benches that drive one over loopback (bench.soak, bench.serve_rss): a home of
generated memories, the environment, the process tree and its roles, RSS and CPU per process, the UI session that
queues the sleep cycle, and the job runs the admin API reports.
The server itself is started, waited for and stopped here too (start_server, wait_for_port, stop_server).
"""

from __future__ import annotations

import http.client
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

from bench._common import REPO, Memory
from bench.procfs import CLOCK_TICKS, children, cmdline, comm, cpu_seconds, niceness, rss_kib  # noqa: F401

JOB_WORKER_NAME = "ormah-job"  # maintenance.cluster (not imported: `--repo` / `--before` serve other checkouts)


def serve_env(home: Path, log_level: str = "WARNING") -> dict[str, str]:
    """The environment of a server (and its `init`) on `home`: no token, no LLM, nothing from the caller's home."""
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": log_level, "ORMAH_API_TOKEN": "", "ORMAH_LLM_PROVIDER": "none"}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_SECRET_KEY"):
        env.pop(key, None)
    return env


def layout_env(layout: str | None) -> dict[str, str]:
    """The server environment of a gunicorn layout "WxT" (workers x threads); none for the checkout's default."""
    if not layout:
        return {}
    workers, threads = layout.lower().split("x")
    return {"ORMAH_WEB_WORKERS": str(int(workers)), "ORMAH_WEB_THREADS": str(int(threads))}


def write_memories(home: Path, memories: list[Memory]) -> None:
    """The corpus as markdown files in the home's node folder (pure domain code, no Django)."""
    sys.path.insert(0, str(REPO))
    from memory.domain.node import Connection, Node
    from memory import files
    from memory.store import MarkdownStore

    from memory.domain.node import utcnow

    store = MarkdownStore(home / "memory")
    rng, now = random.Random(len(memories)), utcnow()
    for m in memories:
        # Used within the last ten days, as in bench/sleep_cycle.py: decay has some work, not the whole memory.
        accessed = now - timedelta(days=rng.uniform(0.0, 10.0))
        created = min(m.created, accessed)
        node = Node(id=m.id, type=m.type, tier="working", content=m.content, title=m.title, created=created,
                    updated=created, last_accessed=accessed, space=m.space, tags=m.tags, source="bench:soak",
                    connections=tuple(Connection(target=t, edge="related_to", weight=0.7, reason="bench")
                                      for t in m.connections))
        files.write_node(store, node)


def free_port() -> int:
    """A loopback port free right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(repo: Path, port: int, env: dict[str, str], log) -> subprocess.Popen:
    """`ormah serve` of the checkout `repo` on `port`, in its own process group, its output into the open file `log`."""
    return subprocess.Popen([sys.executable, str(repo / "manage.py"), "serve", "--port", str(port)], env=env,
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True, cwd=repo)


def wait_for_port(port: int, seconds: float) -> None:
    """Return once something accepts connections on loopback `port`, or after `seconds` all the same."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)


def stop_server(server: subprocess.Popen) -> None:
    """SIGTERM to the server's process group; SIGKILL when it has not ended within 30 s."""
    try:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(server.pid, signal.SIGKILL)


def job_workers(supervisor: int) -> set[int]:
    """The pids of the server's job workers that named themselves (none with a checkout whose workers do not)."""
    return {pid for pid, role in roles(supervisor, name_cluster_children=True).items()
            if role.startswith("qcluster worker") and comm(pid) == JOB_WORKER_NAME}


def rss_mib(pid: int) -> float | None:
    """A process's resident memory in MiB, or None when it is gone."""
    kib = rss_kib(pid)
    return None if kib is None else kib / 1024


def pressure(kind: str) -> float:
    """Linux PSI: the share of the last 10 s that tasks were stalled on `kind` ("full" for io, "some" for cpu)."""
    try:
        lines = Path(f"/proc/pressure/{kind}").read_text().splitlines()
    except OSError:
        return float("nan")
    line = lines[1] if kind == "io" else lines[0]
    return float(line.split()[1].split("=")[1])


def roles(supervisor: int, *, name_cluster_children: bool = False) -> dict[int, str]:
    """pid -> role for every process of the server: supervisor, web master/worker, cluster main/sentinel/children.

    The sentinel's children are one role, "qcluster worker/monitor/pusher", unless `name_cluster_children`: then the
    job workers are those that named themselves (maintenance.cluster; django-q2 replaces one after each task) and the
    others are the monitor and the pusher in their fork order. A checkout whose workers do not name themselves gets
    fork order for all (django-q2 forks its worker(s), then the monitor, then the pusher).
    """
    out = {supervisor: "serve supervisor"}
    for child in children(supervisor):
        if "gunicorn" in cmdline(child):
            out[child] = "gunicorn master"
            for i, worker in enumerate(children(child)):
                out[worker] = f"gunicorn worker {i + 1}"
        elif "qcluster" in cmdline(child):
            out[child] = "qcluster main"
            for sentinel in children(child):
                out[sentinel] = "qcluster sentinel"
                forked = children(sentinel)
                named = [pid for pid in forked if comm(pid) == JOB_WORKER_NAME]
                if named:  # the job workers first, then the others in fork order
                    forked = named + [pid for pid in forked if pid not in named]
                workers = len(named) or len(forked) - 2
                names = ([f"qcluster worker {i + 1}" for i in range(workers)]
                         + ["qcluster monitor", "qcluster pusher"]) if name_cluster_children else (
                    ["qcluster worker/monitor/pusher"] * len(forked))
                for name, pid in zip(names, forked):
                    out[pid] = name
    return out


# ---------------------------------------------------------------------------
# The jobs screen and the job runs
# ---------------------------------------------------------------------------

def ui_session(port: int, password: str):
    """An httpx client logged in to the UI (with its CSRF header), as a user on the jobs screen."""
    import httpx

    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    page = client.get("/login/").text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    client.post("/login/", data={"username": "ormah", "password": password, "csrfmiddlewaretoken": csrf})
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    return client


def task_runs(port: int, token: str, query: str) -> list[dict]:
    """The job runs the admin API lists for `query`."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", f"/api/admin/tasks/runs?{query}", headers={"Authorization": f"Bearer {token}"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def cycle_runs(port: int, token: str) -> list[dict]:
    """Finished runs of the cycle's last job: one per completed sleep cycle."""
    return [r for r in task_runs(port, token, "job=decay_manager&limit=500") if r.get("finished_at")]


def job_times(port: int, token: str) -> dict[str, dict]:
    """Per job of the queued sleep cycles: finished runs, their total and longest duration, unfinished runs."""
    out: dict[str, dict] = {}
    for r in task_runs(port, token, "limit=500"):
        if r.get("started_at") is None:
            continue
        job = out.setdefault(r["job"], {"finished": 0, "total_s": 0.0, "max_s": 0.0, "unfinished": 0})
        if not r.get("finished_at"):
            job["unfinished"] += 1
            continue
        took = (datetime.fromisoformat(r["finished_at"]) - datetime.fromisoformat(r["started_at"])).total_seconds()
        job["finished"] += 1
        job["total_s"] += took
        job["max_s"] = max(job["max_s"], took)
    return out
