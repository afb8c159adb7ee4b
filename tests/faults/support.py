"""Fault-suite plumbing: a real `ormah serve` on a temporary home, its process tree, a stream of HTTP writes that
remembers what the server acknowledged, and the offline verification of a home after a crash.

Process roles under the serve supervisor (found through /proc, no psutil): the gunicorn master and its worker(s),
and `manage.py qcluster` with its sentinel, whose children are the job worker (found by the name it gives itself,
maintenance.cluster: django-q2 replaces it after every task), the monitor and the pusher.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.procfs import alive, children, cmdline, comm, niceness  # noqa: F401 (niceness: re-exported)
from maintenance.cluster import JOB_WORKER_NAME
from tests.support import pg_databases
from tests.support.ports import free_port, listening, wait_until

ROOT = Path(__file__).resolve().parents[2]
MANAGE = str(ROOT / "manage.py")
VERIFY = str(Path(__file__).resolve().parent / "verify_home.py")
SEED = int(os.environ.get("ORMAH_FAULT_SEED", "20260801"))

# A varied vocabulary: bags of ten of these words are far apart in embedding space, so the duplicate merger
# never merges two streamed writes (it needs cosine >= 0.92) and "present" means "live".
WORDS = """anchor apricot avalanche badger bagpipe balcony bamboo banjo barometer basalt beacon beetroot bicycle
biscuit blizzard bonfire boulder bracelet brewery bridle broccoli bucket buffalo cabbage cactus canal candle canoe
canyon caravan cardigan carnival carpet cathedral cello chimney chisel cinnamon citadel clarinet cobblestone comet
compass copper corridor cottage crayon crocodile cucumber cupboard curtain cypress dagger dandelion desert dolphin
doorbell dragonfly drum eclipse elbow emerald engine envelope falcon fern ferry fiddle fireplace flamingo flannel
fountain freight frost galaxy garlic geyser ginger glacier gondola gorilla granite greenhouse guitar hammock harbour
harp hedgehog helmet hurricane iceberg igloo island jaguar jasmine jellyfish kayak kettle kiln kiwi ladder lagoon
lantern lava lemon library lighthouse lobster locomotive lumber magnet mango marble meadow meteor microscope
mitten monastery mosaic mountain mushroom nectar needle nutmeg oasis octopus orchard origami ostrich otter oyster
paddle pagoda palette pancake parachute parrot pebble pelican pepper piano pigeon pinecone pirate plum pottery
prairie pumpkin puzzle quarry quilt rabbit raccoon radish rainbow raven reef rhubarb ribbon saddle saffron sailboat
sandal sapphire satellite scarecrow scooter seashell sequoia shovel skyscraper sleigh snorkel spinach squirrel
stadium starfish steeple submarine sundial swamp tambourine telescope thimble thunder tortoise tractor trombone
tulip tundra turnip umbrella valley velvet violin volcano waffle walnut walrus waterfall whistle windmill yacht
yogurt zebra zeppelin""".split()


def child_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a real Ormah process on `home` (production settings, token from the home's file)."""
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_API_TOKEN": "", "PYTHONUNBUFFERED": "1"}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_SECRET_KEY"):
        env.pop(key, None)
    env.update(pg_databases.child_env(home))  # under make test-pg: the home's own database; nothing on SQLite
    env.update(extra)
    return env


def manage(home: Path, *args: str, timeout: float = 120, **extra: str) -> subprocess.CompletedProcess:
    """`ormah <args>` on `home`, captured."""
    return subprocess.run([sys.executable, MANAGE, *args], env=child_env(home, **extra), capture_output=True,
                          text=True, timeout=timeout)


def copy_home(template: Path, home: Path) -> Path:
    shutil.copytree(template, home, symlinks=True)
    pg_databases.copy_database(template, home)  # on PostgreSQL the store is in the database: copied too
    return home


# ---------------------------------------------------------------------------
# Processes (the /proc readers are bench.procfs's)
# ---------------------------------------------------------------------------

def kill(pid: int | None, sig: int = signal.SIGKILL) -> None:
    if pid is None:
        return
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


# ---------------------------------------------------------------------------
# A real server
# ---------------------------------------------------------------------------

class Served:
    """`ormah serve` in its own session on a free port; every process it started dies with the fixture."""

    def __init__(self, home: Path, *, extra_env: dict[str, str] | None = None) -> None:
        self.home = home
        self.port = free_port()
        self.token = (home / "api_token").read_text().strip()
        self.log_path = home.parent / f"serve-{self.port}.out"  # beside the home: it may be full or read-only
        self.log = open(self.log_path, "w")  # noqa: SIM115
        self.proc = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(self.port)],
                                     env=child_env(home, **(extra_env or {})), stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        self.pgid = self.proc.pid
        self.seen: set[int] = {self.proc.pid}

    # roles -------------------------------------------------------------------------------------------------

    def web_master(self) -> int | None:
        return next((p for p in children(self.proc.pid) if "gunicorn" in cmdline(p)), None)

    def web_workers(self) -> list[int]:
        master = self.web_master()
        return children(master) if master else []

    def cluster(self) -> int | None:
        return next((p for p in children(self.proc.pid) if "qcluster" in cmdline(p)), None)

    def job_worker(self) -> int | None:
        """The cluster's job worker: the sentinel's child that named itself so (not yet named right after a fork)."""
        main = self.cluster()
        sentinel = children(main)[0] if main and children(main) else None
        kids = children(sentinel) if sentinel else []
        return next((pid for pid in kids if comm(pid) == JOB_WORKER_NAME), None)

    def tree(self) -> list[int]:
        """Every live process of the session (also orphans: they stay in the session; each part of the server
        has its own process group inside it)."""
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.getsid(int(entry)) == self.pgid and alive(int(entry)):
                        pids.append(int(entry))
                except (ProcessLookupError, PermissionError):
                    continue
        return pids

    # life --------------------------------------------------------------------------------------------------

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def listening(self) -> bool:
        return listening(self.port)

    def wait_ready(self, timeout: float = 60) -> None:
        assert wait_until(lambda: self.listening() and self.web_workers() and self.job_worker(), timeout, 0.1), \
            f"server did not start: {self.log_path.read_text()[-2000:]}"

    def kill_all(self) -> None:
        for pid in [self.pgid, *self.tree()]:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            self.proc.wait(timeout=10)
        wait_until(lambda: not self.tree(), 10)
        self.log.close()


class Api:
    """Bearer-token JSON over a fresh loopback connection per request. An answer that breaks off (a worker killed
    after its headers went out: IncompleteRead, BadStatusLine) raises ConnectionError, an OSError like every other
    lost connection, so a caller catching OSError survives every way a killed server drops a request."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token

    def call(self, method: str, path: str, body: dict | None = None, *, timeout: float = 30.0,
             headers: dict | None = None) -> tuple[int, dict | None]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            data = json.dumps(body).encode() if body is not None else None
            conn.request(method, path, body=data, headers={
                "Authorization": f"Bearer {self.token}", "Content-Type": "application/json", **(headers or {})})
            try:
                response = conn.getresponse()
                raw = response.read()
            except http.client.HTTPException as exc:
                raise ConnectionError(f"the answer broke off: {exc!r}") from exc
            try:
                return response.status, json.loads(raw) if raw else None
            except ValueError:
                return response.status, {"raw": raw[:500].decode(errors="replace")}
        finally:
            conn.close()


# ---------------------------------------------------------------------------
# The write stream
# ---------------------------------------------------------------------------

@dataclass
class WriteLedger:
    """What the server acknowledged: for each node, the contents it may hold now (the last acknowledged one,
    plus any later write that got no answer and so may or may not have been applied)."""

    allowed: dict[str, set[str]] = field(default_factory=dict)
    acks: int = 0
    failures: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


class WriteStream:
    """Threads that remember (POST /api/agent/remember) and revise (PATCH) their own memories until stopped."""

    def __init__(self, port: int, token: str, *, seed: int, threads: int = 3, patch_share: float = 0.25) -> None:
        self.api = Api(port, token)
        self.ledger = WriteLedger()
        self.stop = threading.Event()
        self.patch_share = patch_share
        self.threads = [threading.Thread(target=self._run, args=(seed * 100 + i, i), daemon=True)
                        for i in range(threads)]

    def start(self) -> WriteStream:
        for t in self.threads:
            t.start()
        return self

    def finish(self) -> WriteLedger:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=40)
        return self.ledger

    @property
    def acks(self) -> int:
        return self.ledger.acks

    def wait_acks(self, n: int, timeout: float = 30) -> bool:
        return bool(wait_until(lambda: self.ledger.acks >= n, timeout))

    def _record(self, status: int | None) -> None:
        with self.ledger.lock:
            if status is not None:
                self.ledger.statuses[status] = self.ledger.statuses.get(status, 0) + 1

    def _run(self, seed: int, index: int) -> None:
        rng = random.Random(seed)
        mine: list[str] = []
        n = 0
        while not self.stop.is_set():
            n += 1
            words = " ".join(rng.sample(WORDS, 10))
            if mine and rng.random() < self.patch_share:
                node_id = rng.choice(mine)
                content = f"w{index}-{n} revised: {words}"
                with self.ledger.lock:
                    self.ledger.allowed[node_id].add(content)
                status, body = self._send("PATCH", f"/api/agent/nodes/{node_id}", {"content": content})
                if status == 200:
                    with self.ledger.lock:
                        self.ledger.allowed[node_id] = {content}
                        self.ledger.acks += 1
                continue
            content = f"w{index}-{n}: {words}"
            status, body = self._send("POST", "/api/agent/remember",
                                      {"content": content, "tags": [f"fault-{index}"], "source": "agent:faults"})
            if status == 201:
                node_id = body["node"]["id"]
                mine.append(node_id)
                with self.ledger.lock:
                    self.ledger.allowed[node_id] = {content}
                    self.ledger.acks += 1

    def _send(self, method: str, path: str, body: dict) -> tuple[int | None, dict | None]:
        try:
            status, answer = self.api.call(method, path, body)
        except OSError:
            status, answer = None, None
        self._record(status)
        if status not in (200, 201):
            with self.ledger.lock:
                self.ledger.failures += 1
            time.sleep(0.05)
        return status, answer


# ---------------------------------------------------------------------------
# After the crash
# ---------------------------------------------------------------------------

def verify(home: Path, **extra_env: str) -> dict:
    """Run tests/faults/verify_home.py on the home (no server running) and return its JSON report."""
    done = subprocess.run([sys.executable, VERIFY], env=child_env(home, **extra_env), capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def missing_acks(ledger: WriteLedger, report: dict) -> list[str]:
    """Acknowledged writes the healed index does not hold with an allowed content."""
    live = report["healed"]["nodes"]
    merged = {m["removed"]: m["kept"] for m in report["merges"]}
    lost = []
    for node_id, contents in ledger.allowed.items():
        if node_id in live:
            if live[node_id]["content"] not in contents:
                lost.append(f"{node_id}: content {live[node_id]['content']!r} not in {sorted(contents)}")
        elif not (node_id in merged and merged[node_id] in live and node_id in report["tombstones"]):
            lost.append(f"{node_id}: gone")
    return lost


def ui_client(server: Served):
    """An httpx client signed in to the web UI as `ormah` (password from the home's ui_password file)."""
    import re

    import httpx

    client = httpx.Client(base_url=server.url(""), timeout=30)
    page = client.get("/login/").text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    password = (server.home / "ui_password").read_text().strip()
    answer = client.post("/login/", data={"username": "ormah", "password": password, "csrfmiddlewaretoken": csrf})
    assert answer.status_code == 302, answer.text[:500]
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    return client


def index_count(home: Path, sql: str) -> int:
    """One number from the live index, read-only (WAL lets this run next to the writers)."""
    import sqlite3

    if pg_databases.ON_POSTGRES:
        return pg_databases.count(home, sql)

    try:
        conn = sqlite3.connect(f"file:{home / 'index.sqlite3'}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute(sql).fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return -1
