"""The garbage collector in served web workers: how often it runs and what its passes cost during the soak's mix.

    python -m bench.serve_gc [--memories 2000] [--home DIR] [--agents 8] [--requests 500] [--layout 2x4]
                             [--repo PATH] [--keep] [--json OUT]

The web part of `ormah serve` starts as bench/serve_cpu.py starts it (its command line and environment, the job
cluster not started, the watcher on unless `--no-watch`) with bench/serve_gc_conf.py's settings: the served ones
plus a record of every collection in each worker (gc.callbacks: its generation and its CPU on the thread that ran
it, which holds the GIL meanwhile, so the worker's other request threads wait for it too). After bench.serve_cpu's
warm-up (every route and probe three times), `--agents` soak agents at once send `--requests` requests each in the
soak's shares (30/30/30/10), a new connection per request. Printed per worker, for the mix only: the collections by
generation, their CPU, the full collections' CPU one by one; and when the worker stopped, the objects the collector
tracks outside the frozen generation, the frozen ones, and the CPU of one full collection then. `--repo` serves
another checkout (a before/after pair): it must hold bench/serve_gc_conf.py (copy it in). A benchmark, not a test:
nothing asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._common import REPO, corpus
from bench.serve_cpu import PROBES, ROUTES, WARM_UP_ROUNDS, Probe, mix, start_web, worker_pids
from bench.serve_tree import rss_mib, serve_env, write_memories
from bench.soak import Agent, Stats

GC_CONF = "python:bench.serve_gc_conf"


def summarise(record: dict, start: float, end: float) -> dict:
    """One worker's record (bench/serve_gc_conf.py) reduced to the collections between `start` and `end`."""
    during = [c for c in record["collections"] if start <= c[0] <= end]
    by_gen = {g: [c for c in during if c[1] == g] for g in (0, 1, 2)}
    return {
        "collections": {g: len(cs) for g, cs in by_gen.items()},
        "cpu_ms": {g: 1000 * sum(c[2] for c in cs) for g, cs in by_gen.items()},
        "full_ms": [round(1000 * c[2], 1) for c in by_gen[2]],
        "tracked": record["tracked"], "frozen": record["frozen"], "full_at_exit_ms": 1000 * record["full_at_exit_s"],
    }


def run(args: argparse.Namespace) -> dict:
    if not (args.repo / "bench" / "serve_gc_conf.py").exists():
        raise SystemExit(f"{args.repo} has no bench/serve_gc_conf.py: copy it in first")
    root = Path(tempfile.mkdtemp(prefix="ormah-serve-gc-"))
    home = root / "home"
    everything = corpus(args.memories + 2000, seed=1)
    stored, fresh = everything[:args.memories], everything[args.memories:]
    os.environ.setdefault("ORMAH_MODEL_CACHE_DIR", str(Path(tempfile.gettempdir()) / "ormah-models"))
    if args.home:
        shutil.copytree(Path(args.home) / "home", home, symlinks=True)
    else:
        write_memories(home, stored)
        subprocess.run([sys.executable, str(args.repo / "manage.py"), "init", "--name", "GC", "--quiet"],
                       env=serve_env(home), check=True, stdout=subprocess.DEVNULL, cwd=args.repo)
    out = root / "gc"
    log = open(root / "web.out", "w")  # noqa: SIM115
    server, port = start_web(home, args.repo, watch=not args.no_watch, profile=None, log=log, layout=args.layout,
                             conf=(GC_CONF, {"BENCH_GC_OUT": str(out)}))
    try:
        token = (home / "api_token").read_text().strip()
        agent = Agent(0, port, token, stored, fresh, Stats(), threading.Event(), seed=7, fresh_connections=True)
        agent.label, agent.source, agent.session = f"serve gc bench {time.time_ns()}", "serve-gc", "serve-gc-agent"
        probe = Probe(port, token, True)
        for n in range(WARM_UP_ROUNDS):
            for route in ROUTES:
                agent.step(route, n + 1)
            for name in PROBES:
                probe.send(name)
        workers = worker_pids(server)
        load = os.getloadavg()[0]
        start = time.time()
        cpu = mix(workers, port, token, stored, fresh, args.agents, args.requests, True, f"{agent.label} mix")
        end = time.time()
        rss = [rss_mib(w) for w in workers]
        load_after = os.getloadavg()[0]
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
        log.close()
    workers_out = {}
    for dump in sorted(root.glob("gc.[0-9]*")):
        workers_out[dump.name.split(".", 1)[1]] = summarise(json.loads(dump.read_text()), start, end)
    result = {"load": [load, load_after], "requests": args.agents * args.requests, "agents": args.agents,
              "worker_cpu_ms": cpu["user_ms"] + cpu["sys_ms"], "rps": cpu["rps"], "rss_mib": rss,
              "workers": workers_out}
    if args.keep:
        print(f"kept {root}", file=sys.stderr)
    else:
        shutil.rmtree(root, ignore_errors=True)
    return result


def report(result: dict) -> None:
    print(f"{result['requests']} requests of the soak's mix from {result['agents']} agents; load average "
          f"{result['load'][0]:.2f} -> {result['load'][1]:.2f}; web CPU {result['worker_cpu_ms']:.1f} ms a request; "
          f"{result['rps']:.1f} req/s; RSS {' + '.join(f'{r:.0f}' for r in result['rss_mib'] if r)} MiB")
    print("| worker | young (0) | middle (1) | full (2) | gc CPU ms a request | each full collection, ms of CPU | "
          "tracked / frozen at exit | a full collection at exit |")
    print("|---|---:|---:|---:|---:|---|---|---:|")
    per_worker = result["requests"] / max(1, len(result["workers"]))
    for pid, w in result["workers"].items():
        n, ms = w["collections"], w["cpu_ms"]
        print(f"| {pid} | {n[0]} ({ms[0]:.0f} ms) | {n[1]} ({ms[1]:.0f} ms) | {n[2]} ({ms[2]:.0f} ms) | "
              f"{sum(ms.values()) / per_worker:.3f} | {', '.join(map(str, w['full_ms'])) or '-'} | "
              f"{w['tracked']:,} / {w['frozen']:,} | {w['full_at_exit_ms']:.1f} ms |")
    print("(gc CPU a request: a worker's collections over an even share of the mix's requests)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--home", help="start from a copy of the folder a --keep run printed (or bench.serve_cpu's)")
    parser.add_argument("--agents", type=int, default=8)
    parser.add_argument("--requests", type=int, default=500, help="requests per agent")
    parser.add_argument("--layout", help="workers x threads, e.g. 1x8 (default: the served checkout's)")
    parser.add_argument("--no-watch", action="store_true", help="serve without the node-folder watcher")
    parser.add_argument("--repo", type=Path, default=REPO, help="serve another checkout (a before/after pair)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    result = run(args)
    report(result)
    if args.json:
        args.json.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
