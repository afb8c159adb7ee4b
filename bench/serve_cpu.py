"""The web worker's CPU per request of each soak route, served over loopback one request at a time.

    python -m bench.serve_cpu [--memories 2000] [--requests 60] [--fresh-connections] [--no-watch]
                              [--profile OUT.prof] [--repo PATH]

A fresh temporary home gets `--memories` generated memories and `ormah init` (as bench/request_cpu.py); then the
web part of `ormah serve` starts: its gunicorn command line and environment as `ormah serve` builds them
(serve_parts, serve_environment; the job cluster is not started; `--layout 1x8` pins the layout), with its access
log written to a file. With more than one worker the workers' CPU is summed. One
client sends the soak's requests (bench/soak_calls.py) one at a time over one keep-alive connection (or a new
connection per request, `--fresh-connections`, as the hook, the CLI and the MCP server make them). Per route the
worker's CPU time is read from /proc before and after `--requests` requests, the main thread (the poller, which
accepts and hands connections to the pool) apart from the request threads. Besides the routes, three probes:
  401   POST /api/agent/recall without a token: the middleware and ninja's auth, no view, no database;
  422   POST /api/agent/recall with the token and an empty body: auth, parsing and validation, no database;
  self  GET /api/agent/self: a route of a few indexed lookups (the database connection and its setup).
Compare the routes with bench/request_cpu.py (the same requests through Django's test client, in process).

Each row gives the workers' CPU per request, of it the system (kernel) time, and the main thread's (the poller) apart
from the request threads'. `--split` starts the workers with bench/serve_split_conf.py, which clocks each request's
layers in the request threads with time.thread_time (gunicorn's handling, Django's WSGI handler, the middleware chain,
ninja's checks, parsing and serialisation, the access log; the view is what is left) and the main thread's graceful
closes, and prints them per path after the run (no profiler: the figures are the layers' own CPU).
`--profile OUT.prof` starts the workers with bench/serve_profile_conf.py, which runs cProfile around each request's
handling in a worker's threads (HTTP parsing, Django, the response, the access log) and writes the stats when the
worker stops (merged here); the top functions are printed. Its CPU figures include the profiler's own cost: use them for
shares, not totals. A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import pstats
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._common import REPO, corpus
from bench.serve_tree import (CLOCK_TICKS, children, cpu_seconds, free_port, layout_env, rss_mib, serve_env,
                              write_memories)
from bench.soak import Agent, Stats

ROUTES = ("remember", "recall", "whisper", "feedback")
PROBES = ("401", "422", "self")
PROFILE_CONF = "python:bench.serve_profile_conf"
SPLIT_CONF = "python:bench.serve_split_conf"
SPLIT_LAYERS = ("handle", "wsgi", "signals", "chain", "operation", "checks", "auth", "values", "result", "access")
WARM_UP_ROUNDS = 3

# The web part's command line and environment, as `ormah serve` builds them (run in the served checkout).
WEB_PART = """
import json, os, sys
import django
django.setup()
from ormah_site.management.commands.serve import serve_environment, serve_parts
web = serve_parts(host="127.0.0.1", port=int(sys.argv[1]), cluster=False)[0]
print(json.dumps({"argv": list(web.argv), "env": serve_environment(os.environ, watch=sys.argv[2] == "1")}))
"""


def thread_cpu(pid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each live thread of a process."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2:].split()
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS
    return out


class Probe:
    """The three probe requests over their own keep-alive (or fresh) connection."""

    def __init__(self, port: int, token: str, fresh: bool) -> None:
        self.port, self.token, self.fresh = port, token, fresh
        self.conn: http.client.HTTPConnection | None = None

    def send(self, probe: str) -> int:
        try:
            return self._send(probe)
        except (OSError, http.client.HTTPException):  # the server closed a kept-alive connection: once more
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            return self._send(probe)

    def _send(self, probe: str) -> int:
        if self.conn is None:
            self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        headers = {"Content-Type": "application/json"}
        if probe != "401":
            headers["Authorization"] = f"Bearer {self.token}"
        if self.fresh:
            headers["Connection"] = "close"
        if probe == "self":
            self.conn.request("GET", "/api/agent/self", headers=headers)
        else:
            self.conn.request("POST", "/api/agent/recall", body=b"{}" if probe == "422" else b'{"query": "x"}',
                              headers=headers)
        response = self.conn.getresponse()
        response.read()
        if self.fresh or response.will_close:
            self.conn.close()
            self.conn = None
        return response.status


def start_web(home: Path, repo: Path, *, watch: bool, profile: Path | None, log, skip: int = 0,
              layout: str | None = None, split: Path | None = None,
              conf: tuple[str, dict[str, str]] | None = None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    env = {**serve_env(home), **layout_env(layout)}
    described = subprocess.run([sys.executable, "-c", WEB_PART, str(port), "1" if watch else "0"], env=env,
                               cwd=repo, check=True, capture_output=True, text=True)
    web = json.loads(described.stdout.strip().splitlines()[-1])
    argv, env = web["argv"], web["env"]
    if profile is not None:
        argv[argv.index("python:ormah_site.gunicorn_conf")] = PROFILE_CONF
        env["BENCH_PROFILE_OUT"], env["BENCH_PROFILE_SKIP"] = str(profile), str(skip)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    elif split is not None:
        argv[argv.index("python:ormah_site.gunicorn_conf")] = SPLIT_CONF
        env["BENCH_SPLIT_OUT"] = str(split)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    elif conf is not None:  # another bench's gunicorn settings module ("python:bench.X") and its environment
        argv[argv.index("python:ormah_site.gunicorn_conf")] = conf[0]
        env.update(conf[1])
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    server = subprocess.Popen(argv, env=env, cwd=repo, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return server, port
        except OSError:
            if server.poll() is not None:
                raise RuntimeError(f"the web part exited with {server.returncode}") from None
            time.sleep(0.2)
    raise RuntimeError("the web part did not listen within 120 s")


def worker_pids(server: subprocess.Popen) -> list[int]:
    """The gunicorn workers (with more than one, a kept-alive connection lands on either: their CPU is summed)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        workers = children(server.pid)
        if workers:
            return workers
        time.sleep(0.2)
    raise RuntimeError("no gunicorn worker")


def _total(fn, workers: list[int]) -> float:
    return sum(fn(w) for w in workers)


def _mains(workers: list[int]) -> float:
    return sum(thread_cpu(w).get(w, 0.0) for w in workers)


def measure(workers: list[int], send, n: int) -> dict:
    """Send `n` requests; the workers' CPU per request (ms): all threads, the main threads, the others."""
    before_all, before, (u0, s0) = _total(cpu_seconds, workers), _mains(workers), _user_sys(workers)
    started, client = time.perf_counter(), time.process_time()
    statuses = [send() for _ in range(n)]
    wall, client = time.perf_counter() - started, time.process_time() - client
    time.sleep(0.3)  # the watcher's debounced sync of the last writes counts too
    after_all, after, (u1, s1) = _total(cpu_seconds, workers), _mains(workers), _user_sys(workers)
    main = after - before
    total = after_all - before_all
    return {"cpu_ms": total / n * 1000, "main_ms": main / n * 1000, "threads_ms": (total - main) / n * 1000,
            "wall_ms": wall / n * 1000, "client_ms": client / n * 1000, "sys_ms": (s1 - s0) / n * 1000,
            "statuses": sorted(set(statuses))}


def ctx_switches(pid: int) -> int:
    """Voluntary plus involuntary context switches of every live thread of a process."""
    total = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
                if "ctxt_switches:" in line:
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def user_sys(pid: int) -> tuple[float, float]:
    raw = Path(f"/proc/{pid}/stat").read_text()
    fields = raw[raw.rindex(")") + 2:].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def _user_sys(workers: list[int]) -> tuple[float, float]:
    pairs = [user_sys(w) for w in workers]
    return sum(u for u, _ in pairs), sum(s for _, s in pairs)


def mix(workers: list[int], port: int, token: str, stored, fresh, agents: int, per_agent: int, fresh_connections: bool,
        label: str) -> dict:
    """`agents` soak agents at once, each `per_agent` requests of the soak's mix: the worker's CPU per request."""
    import random

    from bench.soak_report import MIX

    routes, weights = zip(*MIX)
    crowd = []
    for i in range(agents):
        agent = Agent(i + 1, port, token, stored, fresh, Stats(), threading.Event(), seed=100 + i,
                      fresh_connections=fresh_connections)
        agent.label, agent.source, agent.session = f"{label} agent {i + 1}", "serve-cpu", f"serve-cpu-mix-{i + 1}"
        crowd.append(agent)

    def loop(agent):
        # the mix's exact shares in a shuffled order, so 1 and `agents` agents send the same kinds of requests
        order = [r for r, w in zip(routes, weights) for _ in range(round(w * per_agent))]
        random.Random(agent.index).shuffle(order)
        for n, route in enumerate(order):
            agent.step(route, n + 1)

    (u0, s0), switches = _user_sys(workers), _total(ctx_switches, workers)
    started = time.perf_counter()
    threads = [threading.Thread(target=loop, args=(a,)) for a in crowd]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - started
    time.sleep(0.3)
    (u1, s1), switches = _user_sys(workers), _total(ctx_switches, workers) - switches
    n = agents * sum(round(w * per_agent) for w in weights)
    return {"user_ms": (u1 - u0) / n * 1000, "sys_ms": (s1 - s0) / n * 1000, "switches": switches / n,
            "rps": n / wall}


def print_split(root: Path) -> None:
    """The request threads' CPU per layer (bench/serve_split_conf.py), ms per request, per path (workers summed)."""
    totals: dict[str, dict[str, float]] = {}
    for dump in sorted(root.glob("split.[0-9]*")):
        for path, row in json.loads(dump.read_text()).items():
            into = totals.setdefault(path, {})
            for k, v in row.items():
                into[k] = into.get(k, 0.0) + v
    print("\nThe request threads' CPU by layer, ms per request (thread_time; nested: handle > wsgi > chain > "
          "operation > checks > auth)")
    print("| path | n | " + " | ".join(SPLIT_LAYERS) + " |")
    print("|---|---:|" + "---:|" * len(SPLIT_LAYERS))
    for path, row in sorted(totals.items()):
        n = row.get("n", 0) or 1
        cells = " | ".join(f"{row.get(k, 0.0) / n * 1000:.2f}" for k in SPLIT_LAYERS)
        print(f"| {path} | {n:.0f} | {cells} |")
    print("(the main thread's close_graceful row: wall ms in the handle column, CPU ms in the wsgi column)")


def run(args) -> int:
    root = Path(tempfile.mkdtemp(prefix="ormah-serve-cpu-"))
    home = root / "home"
    everything = corpus(args.memories + 2000, seed=1)
    stored, fresh = everything[:args.memories], everything[args.memories:]
    os.environ.setdefault("ORMAH_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ormah-models"))
    if args.home:  # a copy of a home this bench kept (--keep): the same store without indexing it again
        shutil.copytree(Path(args.home) / "home", home, symlinks=True)
    else:
        write_memories(home, stored)
        subprocess.run([sys.executable, str(args.repo / "manage.py"), "init", "--name", "CPU", "--quiet"],
                       env=serve_env(home), check=True, stdout=subprocess.DEVNULL, cwd=args.repo)
    log = open(root / "web.out", "w")  # noqa: SIM115
    profile = Path(args.profile).resolve() if args.profile else None
    split = root / "split" if args.split else None
    server, port = start_web(home, args.repo, watch=not args.no_watch, profile=profile, log=log,
                             skip=WARM_UP_ROUNDS * (len(ROUTES) + len(PROBES)), layout=args.layout,
                             split=split)
    try:
        workers = worker_pids(server)
        token = (home / "api_token").read_text().strip()
        agent = Agent(0, port, token, stored, fresh, Stats(), threading.Event(), seed=7,
                      fresh_connections=args.fresh_connections)
        # A label of its own per run: a run on a copied home (--home) must not find its texts' vectors cached.
        agent.label, agent.source, agent.session = f"serve cpu bench {time.time_ns()}", "serve-cpu", "serve-cpu-agent"
        probe = Probe(port, token, args.fresh_connections)
        counter = iter(range(1, 10**9))

        def route_sender(route):
            def send():
                agent.step(route, next(counter))
                return "ok"
            return send

        for _ in range(WARM_UP_ROUNDS):  # warm-up: the model, the scorer, the URL conf, the matrix
            for route in ROUTES:
                route_sender(route)()
            for name in PROBES:
                probe.send(name)
        workers = worker_pids(server)  # again: with --preload the master forks its workers one after another
        if split is not None:
            Path(f"{split}.go").touch()  # bench/serve_split_conf.py counts from here
        load = os.getloadavg()
        print(f"load average {load[0]:.2f} {load[1]:.2f}; {args.memories} memories; {args.requests} requests "
              f"per route; {'a new connection per request' if args.fresh_connections else 'keep-alive'}; "
              f"watcher {'off' if args.no_watch else 'on'}; {len(workers)} worker(s), CPU summed"
              f"{'; PROFILED' if profile else ''}")
        print("| request | worker CPU ms / request | of it system | main thread | request threads | wall ms | status |")
        print("|---|---:|---:|---:|---:|---:|---|")
        for name in (*ROUTES, *PROBES):
            send = route_sender(name) if name in ROUTES else (lambda name=name: probe.send(name))
            r = measure(workers, send, args.requests)
            print(f"| {name} | {r['cpu_ms']:.1f} | {r['sys_ms']:.1f} | {r['main_ms']:.1f} | {r['threads_ms']:.1f} | {r['wall_ms']:.1f} "
                  f"| {','.join(map(str, r['statuses']))} |")
        if args.agents:
            print(f"\nThe soak's mix, {args.requests} requests per agent, load average {os.getloadavg()[0]:.2f}:")
            print("| agents at once | worker CPU ms / request (user + sys) | context switches / request | req/s |")
            print("|---:|---|---:|---:|")
            for k in sorted({1, args.agents}):
                r = mix(workers, port, token, stored, fresh, k, args.requests, args.fresh_connections,
                        f"{agent.label} mix {k}")
                print(f"| {k} | {r['user_ms'] + r['sys_ms']:.1f} ({r['user_ms']:.1f} + {r['sys_ms']:.1f}) | "
                      f"{r['switches']:.0f} | {r['rps']:.1f} |")
        rss = " + ".join(f"{rss_mib(w):.0f}" for w in workers)
        print(f"load average after {os.getloadavg()[0]:.2f}; the workers' RSS {rss} MiB")
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()
        if split is not None:
            print_split(root)
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    dumps = sorted(profile.parent.glob(f"{profile.name}.*")) if profile is not None else []
    if dumps:  # one file per worker (bench/serve_profile_conf.py)
        stats = pstats.Stats(*map(str, dumps))
        stats.dump_stats(str(profile))
        for dump in dumps:
            dump.unlink()
        stats.sort_stats("tottime").print_stats(args.top)
        stats.sort_stats("cumulative").print_stats(args.top)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=60, help="requests per route and probe")
    parser.add_argument("--fresh-connections", action="store_true", help="a new connection per request")
    parser.add_argument("--agents", type=int, default=0,
                        help="then the soak's mix from 1 and from this many agents at once")
    parser.add_argument("--layout", help="workers x threads, e.g. 1x8 (default: the served checkout's)")
    parser.add_argument("--no-watch", action="store_true", help="serve without the node-folder watcher")
    parser.add_argument("--profile", help="write the worker's cProfile stats here (and print the top)")
    parser.add_argument("--top", type=int, default=40)
    parser.add_argument("--split", action="store_true",
                        help="clock the layers of each request's handling (bench/serve_split_conf.py) and print them")
    parser.add_argument("--repo", type=Path, default=REPO, help="serve another checkout (a before/after pair)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument("--home", help="start from a copy of the folder a --keep run printed")
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
