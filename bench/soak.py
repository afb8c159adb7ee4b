"""Soak: concurrent agents against a real `ormah serve` over loopback, with the sleep cycle running.

    python -m bench.soak [--seconds 60] [--agents 4] [--memories 1000] [--cycle-every 20] [--write-docs]

A fresh temporary home gets `--memories` generated memories (bench/_common.py corpus, written as markdown files and
indexed by `ormah init`), then `ormah serve` starts (gunicorn, job cluster, watcher; the defaults: 1 worker x 8
threads, 1 job worker). Each agent is a thread with its own keep-alive connection and whisper session, looping
without think time over: remember 30 %, recall 30 %, whisper 30 %, feedback 10 % (on a memory its last recall or
whisper returned). Every `--cycle-every` seconds the sleep cycle is queued on the job cluster from the jobs screen
(as a user would), unless the previous one is still running. The RSS of every server process is sampled each
second.

Reported: requests and throughput, p50/p95/p99 latency per route, errors (any status other than 200/201, or no
answer; the target is zero), sleep cycles completed, and RSS per process role at the start and end of the
measured window with its least-squares slope. `--write-docs` replaces the "Soak" section of docs/benchmarks.md.
This is a benchmark, not a test: nothing here asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import datetime, timedelta
from pathlib import Path

from bench._common import REPO, Memory, corpus, machine, percentile, replace_section

SECTION = "Soak"
MANAGE = str(REPO / "manage.py")
MIX = (("remember", 0.3), ("recall", 0.3), ("whisper", 0.3), ("feedback", 0.1))
ROUTES = tuple(route for route, _ in MIX)
WARM_UP_SECONDS = 5.0
OK = {200, 201}


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------

def _env(home: Path, log_level: str = "WARNING") -> dict[str, str]:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": log_level, "ORMAH_API_TOKEN": "", "ORMAH_LLM_PROVIDER": "none"}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_SECRET_KEY"):
        env.pop(key, None)
    return env


def _write_memories(home: Path, memories: list[Memory]) -> None:
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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                raw = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2:].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append((int(fields[19]), int(entry)))
    return [p for _, p in sorted(found)]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _rss_mib(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def _pressure(kind: str) -> float:
    """Linux PSI: the share of the last 10 s that tasks were stalled on `kind` ("full" for io, "some" for cpu)."""
    try:
        lines = Path(f"/proc/pressure/{kind}").read_text().splitlines()
    except OSError:
        return float("nan")
    line = lines[1] if kind == "io" else lines[0]
    return float(line.split()[1].split("=")[1])


def roles(supervisor: int) -> dict[int, str]:
    """pid -> role for every process of the server: supervisor, web master/worker, cluster main/sentinel/children."""
    out = {supervisor: "serve supervisor"}
    for child in _children(supervisor):
        if "gunicorn" in _cmdline(child):
            out[child] = "gunicorn master"
            for i, worker in enumerate(_children(child)):
                out[worker] = f"gunicorn worker {i + 1}"
        elif "qcluster" in _cmdline(child):
            out[child] = "qcluster main"
            for sentinel in _children(child):
                out[sentinel] = "qcluster sentinel"
                for grandchild in _children(sentinel):
                    out[grandchild] = "qcluster worker/monitor/pusher"
    return out


# ---------------------------------------------------------------------------
# Agents
# ---------------------------------------------------------------------------

class Stats:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latency: dict[str, list[float]] = defaultdict(list)
        self.errors: dict[str, int] = defaultdict(int)
        self.samples: list[str] = []
        self.error_times: list[float] = []
        self.measuring = False
        self.t0 = 0.0

    def record(self, route: str, seconds: float, status: int | None, detail: str = "") -> None:
        if not self.measuring:
            return
        with self.lock:
            self.latency[route].append(seconds)
            if status not in OK:
                self.errors[route] += 1
                self.error_times.append(round(time.monotonic() - self.t0, 1))
                if len(self.samples) < 10:
                    self.samples.append(f"{route}: {status} {detail[:200]}")


class Agent(threading.Thread):
    """One agent: a keep-alive connection, a whisper session, a closed loop over the mix."""

    def __init__(self, index: int, port: int, token: str, memories: list[Memory], fresh: list[Memory],
                 stats: Stats, stop: threading.Event, seed: int, mix: tuple = MIX) -> None:
        super().__init__(daemon=True)
        self.mix = mix
        self.index, self.port, self.token = index, port, token
        self.memories, self.fresh = memories, fresh
        self.stats, self.stop = stats, stop
        self.rng = random.Random(seed)
        self.conn: http.client.HTTPConnection | None = None
        self.last_ids: list[str] = []
        self.last_log: int | None = None
        self.session = f"soak-agent-{index}"

    def _call(self, route: str, path: str, body: dict) -> dict | None:
        started = time.perf_counter()
        status, detail, answer = None, "", None
        try:
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            self.conn.request("POST", path, body=json.dumps(body), headers={
                "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
            response = self.conn.getresponse()
            raw = response.read()
            status = response.status
            answer = json.loads(raw) if raw else None
            if status not in OK:
                detail = raw[:200].decode(errors="replace")
        except (OSError, http.client.HTTPException, ValueError) as exc:
            detail = f"{type(exc).__name__}: {exc}"
            if self.conn is not None:
                self.conn.close()
            self.conn = None
        self.stats.record(route, time.perf_counter() - started, status, detail)
        return answer if status in OK else None

    def _query(self) -> str:
        words = [w for w in re.findall(r"[A-Za-z][\w.-]+", self.rng.choice(self.memories).content) if len(w) > 3]
        return " ".join(self.rng.sample(words, min(len(words), self.rng.randint(2, 4))))

    def run(self) -> None:
        routes, weights = zip(*self.mix)
        n = 0
        while not self.stop.is_set():
            n += 1
            route = self.rng.choices(routes, weights)[0]
            if route == "feedback" and not self.last_ids:
                route = "recall"
            if route == "remember":
                m = self.fresh[(self.index * 100_003 + n) % len(self.fresh)]
                self._call(route, "/api/agent/remember", {
                    "content": f"{m.content} (agent {self.index}, note {n})", "type": m.type, "title": m.title,
                    "tags": list(m.tags), "space": m.space, "source": f"agent:soak-{self.index}"})
            elif route == "recall":
                answer = self._call(route, "/api/agent/recall", {"query": self._query(), "limit": 10,
                                                                   "session_id": self.session})
                if answer:
                    self.last_ids, self.last_log = [r["id"] for r in answer["results"]], None
            elif route == "whisper":
                prompt = f"What do we know about {self._query()}?"
                answer = self._call(route, "/api/agent/whisper", {"prompt": prompt, "session_id": self.session})
                if answer and answer.get("node_ids"):
                    self.last_ids, self.last_log = answer["node_ids"], answer.get("whisper_log_id")
            else:
                body = {"node_id": self.rng.choice(self.last_ids), "signal": self.rng.choice((1, 1, -1)),
                        "source": "explicit"}
                if self.last_log is not None:
                    body["whisper_log_id"] = self.last_log
                self._call(route, "/api/agent/feedback", body)


# ---------------------------------------------------------------------------
# The sleep cycle, queued from the jobs screen
# ---------------------------------------------------------------------------

def _ui_session(port: int, password: str):
    import httpx

    client = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60)
    page = client.get("/login/").text
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    client.post("/login/", data={"username": "ormah", "password": password, "csrfmiddlewaretoken": csrf})
    client.headers["X-CSRFToken"] = client.cookies["csrftoken"]
    return client


def _runs(port: int, token: str, query: str) -> list[dict]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("GET", f"/api/admin/tasks/runs?{query}", headers={"Authorization": f"Bearer {token}"})
        return json.loads(conn.getresponse().read())
    finally:
        conn.close()


def _cycle_runs(port: int, token: str) -> list[dict]:
    """Finished runs of the cycle's last job: one per completed sleep cycle."""
    return [r for r in _runs(port, token, "job=decay_manager&limit=500") if r.get("finished_at")]


def job_times(port: int, token: str) -> dict[str, dict]:
    """Per job of the queued sleep cycles: finished runs, their total and longest duration, unfinished runs."""
    out: dict[str, dict] = {}
    for r in _runs(port, token, "limit=500"):
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


def cycle_loop(port: int, token: str, password: str, every: float, stop: threading.Event, log: list) -> None:
    """Queue the sleep cycle every `every` seconds unless the last one queued has not finished."""
    ui = _ui_session(port, password)
    pending_since = None
    while not stop.wait(0 if pending_since is None else 1.0):
        try:
            finished = len(_cycle_runs(port, token))
        except (OSError, http.client.HTTPException, ValueError):
            continue  # the server did not answer in time: try again (the agents count their own errors)
        if pending_since is not None and finished > len([e for e in log if e["done"]]):
            log[-1]["done"] = time.monotonic()
            pending_since = None
        if pending_since is None and (not log or time.monotonic() - log[-1]["queued"] >= every):
            answer = ui.post("/jobs/sleep-cycle/")
            log.append({"queued": time.monotonic(), "done": None, "status": answer.status_code})
            pending_since = log[-1]["queued"]
    ui.close()


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------

def _slope_mib_per_min(points: list[tuple[float, float]]) -> float:
    if len(points) < 3:
        return float("nan")
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 60 * sum((t - mx) * (v - my) for t, v in points) / var if var else float("nan")


def summarise(stats: Stats, seconds: float, rss: dict[str, list[tuple[float, float]]], cycles: list[dict]) -> dict:
    routes = {}
    for route in ROUTES:
        values = stats.latency.get(route, [])
        routes[route] = {
            "requests": len(values), "errors": stats.errors.get(route, 0),
            "per_s": len(values) / seconds if seconds else 0.0,
            "p50_ms": percentile(values, 50) * 1000, "p95_ms": percentile(values, 95) * 1000,
            "p99_ms": percentile(values, 99) * 1000, "max_ms": max(values) * 1000 if values else float("nan"),
        }
    memory = {}
    for role, points in sorted(rss.items()):
        half = points[0][0] + (points[-1][0] - points[0][0]) / 2
        memory[role] = {"start_mib": points[0][1], "end_mib": points[-1][1], "max_mib": max(v for _, v in points),
                        "slope_mib_per_min": _slope_mib_per_min(points),
                        "second_half_slope_mib_per_min": _slope_mib_per_min([p for p in points if p[0] >= half]),
                        "samples": len(points), "series": [(round(t, 1), round(v, 1)) for t, v in points]}
    done = [c for c in cycles if c["done"]]
    return {
        "seconds": seconds, "requests": sum(r["requests"] for r in routes.values()),
        "errors": sum(r["errors"] for r in routes.values()), "routes": routes, "error_samples": stats.samples,
        "rss": memory, "cycles_queued": len(cycles), "cycles_done": len(done),
        "cycle_s": [round(c["done"] - c["queued"], 1) for c in done],
    }


def _flag(mix: tuple) -> str:
    return ",".join(f"{route}={w:g}" for route, w in mix)


def _describe(mix: tuple) -> str:
    total = sum(w for _, w in mix) or 1
    return ", ".join(f"{route} {100 * w / total:.0f} %" for route, w in mix if w)


def markdown(result: dict, args, facts: dict) -> str:
    s = result["summary"]
    lines = [
        f"`python -m bench.soak --seconds {args.seconds:g} --agents {args.agents} --memories {args.memories} "
        f"--cycle-every {args.cycle_every:g}" + (f" --mix {_flag(args.mix)}" if args.mix != MIX else "") + "`"
        f": {args.agents} agents (threads, one keep-alive connection and whisper "
        f"session each, no think time) against `ormah serve` on loopback (gunicorn 1 worker x 8 threads, 1 job "
        f"worker, watcher on), a home of {args.memories:,} generated memories (bench/_common.py corpus, used "
        f"within the last ten days) plus what the agents write. Mix: {_describe(args.mix)}. The sleep cycle was "
        f"queued on the job cluster from the jobs screen every {args.cycle_every} s (never two at once). "
        f"Measured window {s['seconds']:.0f} s after a {WARM_UP_SECONDS:.0f} s warm-up.",
        "",
        f"Machine: {facts['cpu']}, {facts['cpus']} CPUs, {facts['ram']}, {facts['os']}, Python {facts['python']}, "
        f"home on {facts['temp_fs']}. Load average before / after: {result['load_before']} / "
        f"{result['load_after']}.",
        "",
        f"**{s['requests']:,} requests, {s['requests'] / s['seconds']:.1f}/s, {s['errors']} errors**; "
        f"{s['cycles_done']} sleep cycles completed ({s['cycles_queued']} queued"
        + (f"; {min(s['cycle_s'])}-{max(s['cycle_s'])} s each" if s["cycle_s"] else "") + ").",
        "",
        "| Route | Requests | Per second | p50 | p95 | p99 | max | Errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for route, r in s["routes"].items():
        lines.append(f"| {route} | {r['requests']:,} | {r['per_s']:.1f} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms "
                     f"| {r['p99_ms']:.0f} ms | {r['max_ms']:.0f} ms | {r['errors']} |")
    lines += ["", "Resident memory of the server processes, sampled every second over the measured window:", "",
              "| Process | Start | End | Max | Slope | Slope, second half |", "|---|---:|---:|---:|---:|---:|"]
    for role, m in s["rss"].items():
        lines.append(f"| {role} | {m['start_mib']:.0f} MiB | {m['end_mib']:.0f} MiB | {m['max_mib']:.0f} MiB "
                     f"| {m['slope_mib_per_min']:+.2f} MiB/min | {m['second_half_slope_mib_per_min']:+.2f} MiB/min |")
    if s.get("jobs"):
        order = ("importance_scorer", "index_updater", "duplicate_merger", "conflict_detector", "auto_linker",
                 "auto_cluster", "consolidator", "decay_manager")
        lines += ["", "Maintenance jobs run by the cluster during the soak (queued cycles and schedules):", "",
                  "| Job | Finished runs | Longest | Still running at the end |", "|---|---:|---:|---:|"]
        for name in sorted(s["jobs"], key=lambda j: order.index(j) if j in order else 99):
            j = s["jobs"][name]
            lines.append(f"| {name} | {j['finished']} | {j['max_s']:.1f} s | {j['unfinished']} |")
    restarts = s.get("web_workers_started_s", [])[1:]
    if restarts:
        lines += ["", f"The gunicorn worker was replaced at {', '.join(f'{t:.0f} s' for t in restarts)} of the window; "
                      f"errors at {', '.join(f'{t:.0f} s' for t in s['error_times_s'][:10])}."]
    if "pressure" in s:
        lines += ["", f"Pressure (Linux PSI): I/O full avg10 peaked at {s['pressure']['io_full_avg10_max']:.1f} %, "
                      f"CPU some avg10 averaged {s['pressure']['cpu_some_avg10_mean']:.1f} %."]
    if s["error_samples"]:
        lines += ["", "First errors: " + "; ".join(f"`{e}`" for e in s["error_samples"])]
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def run(args) -> dict:
    root = Path(tempfile.mkdtemp(prefix="ormah-soak-"))
    home = root / "home"
    everything = corpus(args.memories + 2000, seed=args.seed)
    memories, fresh = everything[:args.memories], everything[args.memories:]
    _write_memories(home, memories)
    started = time.monotonic()
    subprocess.run([sys.executable, MANAGE, "init", "--name", "Soak", "--quiet"], env=_env(home), check=True)
    print(f"init with {args.memories} memories: {time.monotonic() - started:.1f} s", file=sys.stderr)
    port = _free_port()
    log = open(root / "serve.out", "w")  # noqa: SIM115
    server = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(port)],
                              env=_env(home, args.log_level), stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    result: dict = {"load_before": " ".join(Path("/proc/loadavg").read_text().split()[:3])}
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.2)
        token = (home / "api_token").read_text().strip()
        password = (home / "ui_password").read_text().strip()
        stats, stop = Stats(), threading.Event()
        agents = [Agent(i, port, token, memories, fresh, stats, stop, args.seed * 1000 + i, args.mix)
                  for i in range(args.agents)]
        for agent in agents:
            agent.start()
        time.sleep(WARM_UP_SECONDS)
        cycles: list[dict] = []
        cycler = threading.Thread(target=cycle_loop, args=(port, token, password, args.cycle_every, stop, cycles),
                                  daemon=True)
        cycler.start()
        rss: dict[str, list[tuple[float, float]]] = defaultdict(list)
        pressure: list[tuple[float, float, float]] = []
        workers: dict[int, float] = {}
        t0 = stats.t0 = time.monotonic()
        stats.measuring = True
        while (elapsed := time.monotonic() - t0) < args.seconds:
            for pid, role in roles(server.pid).items():
                value = _rss_mib(pid)
                if value is not None:
                    rss[f"{role} ({pid})" if role.startswith("qcluster worker") else role].append((elapsed, value))
                if role.startswith("gunicorn worker"):
                    workers.setdefault(pid, round(elapsed, 1))
            pressure.append((round(elapsed, 1), _pressure("io"), _pressure("cpu")))
            time.sleep(1.0)
        stats.measuring = False
        seconds = time.monotonic() - t0
        stop.set()
        for agent in agents:
            agent.join(timeout=60)
        cycler.join(timeout=60)
        result["summary"] = summarise(stats, seconds, rss, cycles)
        result["summary"]["jobs"] = job_times(port, token)
        result["summary"]["error_times_s"] = stats.error_times
        result["summary"]["web_workers_started_s"] = sorted(workers.values())
        result["summary"]["pressure"] = {
            "io_full_avg10_max": max((p[1] for p in pressure), default=float("nan")),
            "cpu_some_avg10_mean": sum(p[2] for p in pressure) / len(pressure) if pressure else float("nan"),
            "series": pressure}
        result["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        result["serve_tail"] = (root / "serve.out").read_text(errors="replace")[-2000:]
    finally:
        try:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(server.pid, signal.SIGKILL)
        log.close()
        result["machine"] = machine(root)
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return result


def _mix(text: str) -> tuple:
    weights = dict(part.split("=") for part in text.split(","))
    unknown = set(weights) - set(ROUTES)
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown routes: {', '.join(sorted(unknown))}")
    return tuple((route, float(weights.get(route, 0))) for route in ROUTES)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="measured window (after a 5 s warm-up)")
    parser.add_argument("--agents", type=int, default=4)
    parser.add_argument("--memories", type=int, default=1000, help="generated memories in the home at start")
    parser.add_argument("--cycle-every", type=float, default=20.0, help="seconds between sleep cycles")
    parser.add_argument("--mix", type=_mix, default=MIX,
                        help="route weights, e.g. remember=0,recall=45,whisper=45,feedback=10 (default 30/30/30/10)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the full result here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home (and the server's output)")
    parser.add_argument("--log-level", default="WARNING", help="ORMAH_LOG_LEVEL of the server")
    parser.add_argument("--write-docs", action="store_true", help='replace the "Soak" section of docs/benchmarks.md')
    args = parser.parse_args(argv)
    result = run(args)
    text = markdown(result, args, result["machine"])
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
    if args.write_docs:
        replace_section(SECTION, text, machine_md="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
