"""Soak: concurrent agents against a real `ormah serve` over loopback, with the sleep cycle running.

    python -m bench.soak [--seconds 60] [--agents 4] [--memories 1000] [--cycle-every 20] [--layout 2x4]
                         [--connect per-request|keep-alive] [--sockets shared|per-worker] [--home-cache DIR]
                         [--repo PATH] [--write-docs]

A fresh temporary home gets `--memories` generated memories (bench/_common.py corpus, written as markdown files and
indexed by `ormah init`; `--home-cache` keeps that home and copies it for later runs of the same memories and the
same `--repo` code; it refuses a non-empty folder it did not make), then
`ormah serve` starts (gunicorn, job cluster, watcher; the served defaults, 2 workers x 4 threads and 1 job worker at
nice 10, unless `--layout` or `--sockets` say otherwise). Once every web worker polls its listening socket, the
agents start: each is a thread with its own whisper session, looping without think time over remember 30 %, recall
30 %, whisper 30 %, feedback 10 % (on a memory its last recall or whisper returned), and opening a new connection per
request as Ormah's clients do (the hook and the CLI are a process per call, the MCP server makes an HTTP client per
call), or with `--connect keep-alive` keeping one connection for the whole run. Every `--cycle-every` seconds the
sleep cycle is queued on the job cluster from the jobs screen (as a user would), unless the previous one is still
running. The RSS of every server process is sampled each second, and the CPU time of each over the measured window.
`--repo` serves another checkout's code (a `git archive` of the revision before a change), so a before/after pair
runs the same agents.

Reported: requests and throughput, p50/p95/p99 latency per route, errors (any status other than 200/201, or no
answer; the target is zero), sleep cycles completed, RSS per process role at the start and end of the measured
window with its least-squares slope, and per web worker the connections it served, the agents' requests it answered
and its CPU (bench/soak_workers.py): with two workers the split decides much of a run's throughput and tails.
The agents and the sleep cycle's loop live in bench/soak_agents.py.
`--write-docs` replaces its marked block in the "Soak" section of docs/benchmarks.md. This is a benchmark, not a test: nothing here
asserts.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

from bench._common import REPO, Memory, corpus, machine, write_block
from bench.serve_tree import (cmdline, cpu_seconds, free_port, job_times, layout_env, niceness, pressure, roles,
                              rss_mib, serve_env, start_server, stop_server, wait_for_port, write_memories)
from bench.soak_agents import Agent, Stats, cycle_loop
from bench.soak_home import SoakError, cache_home, cached_home, claim_cache, home_stamp
from bench.soak_report import MIX, ROUTES, WARM_UP_SECONDS, markdown, summarise
from bench.soak_workers import WorkerSplit, balance, listening, polled_sockets

WARM_UP_LIMIT_SECONDS = 120.0


# ---------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------

def _layout(tree: dict[int, str]) -> str:
    """What the server runs, read from its processes: gunicorn workers x threads, job workers."""
    workers = sum(role.startswith("gunicorn worker") for role in tree.values())
    master = next((pid for pid, role in tree.items() if role == "gunicorn master"), None)
    threads = re.search(r"--threads (\d+)", cmdline(master)) if master else None
    jobs = max(0, sum(role.startswith("qcluster worker") for role in tree.values()) - 2)  # minus monitor, pusher
    cluster = next((pid for pid, role in tree.items() if role == "qcluster main"), None)
    nice = niceness(cluster) if cluster else None
    return (f"gunicorn {workers} worker{'s' * (workers != 1)} x {threads.group(1) if threads else '?'} threads, "
            f"{jobs} job worker{'s' * (jobs != 1)}" + (f" at nice {nice}" if nice else ""))


def _warm_up(stats: Stats, mix: tuple) -> float:
    """WARM_UP_SECONDS, and until every route of the mix has answered once (the first requests after start wait for
    the model load and Django's first URL imports: seconds on a loaded box), at most WARM_UP_LIMIT_SECONDS."""
    started = time.monotonic()
    routes = {route for route, weight in mix if weight}
    time.sleep(WARM_UP_SECONDS)
    while not routes <= stats.answered and time.monotonic() - started < WARM_UP_LIMIT_SECONDS:
        time.sleep(0.2)
    return time.monotonic() - started


def _sample(server: int, seconds: float, stats: Stats, split: WorkerSplit, agents: list) -> dict:
    """Every second of the measured window: RSS and CPU time per server process, the connections each web worker
    holds, and the box's pressure."""
    rss: dict[str, list[tuple[float, float]]] = defaultdict(list)
    cpu: dict[int, list] = {}  # pid -> [role, CPU seconds at its first sample, at its last]
    psi: list[tuple[float, float, float]] = []
    workers: dict[int, float] = {}
    tree: dict[int, str] = {}
    t0 = stats.t0 = time.monotonic()
    own = time.process_time()
    stats.measuring = True
    while (elapsed := time.monotonic() - t0) < seconds:
        tree = roles(server)
        for pid, role in tree.items():
            value, used = rss_mib(pid), cpu_seconds(pid)
            if value is not None:
                rss[f"{role} ({pid})" if role.startswith("qcluster worker") else role].append((elapsed, value))
            if used is not None:
                cpu.setdefault(pid, [role, used, used])[2] = used
            if role.startswith("gunicorn worker"):
                workers.setdefault(pid, round(elapsed, 1))
        split.sample([pid for pid, role in tree.items() if role.startswith("gunicorn worker")])
        psi.append((round(elapsed, 1), pressure("io"), pressure("cpu")))
        time.sleep(1.0)
    stats.measuring = False
    window = time.monotonic() - t0
    split_rows = split.finish(cpu, window, agents[0].fresh_connections if agents else True,
                              set().union(*(agent.ports for agent in agents)))
    by_role: dict[str, float] = defaultdict(float)
    for role, first, last in cpu.values():
        by_role[role] += last - first
    by_role["bench"] = time.process_time() - own
    return {"seconds": window, "rss": rss, "cpu": dict(by_role), "psi": psi, "workers": workers,
            "layout": _layout(tree), "split": split_rows, "listeners": len(split.listeners),
            "crowding": split.crowding()}


def _make_home(home: Path, memories: list[Memory], args, manage: str) -> None:
    """The generated memories in `home`, indexed by `ormah init`; with `--home-cache`, a copy of the home an earlier
    run built from the same memories with the same code (the index build is most of a run's start on a loaded box)."""
    stamp = home_stamp(memories, args.seed, args.repo)
    cached = cached_home(args.home_cache, stamp) if args.home_cache else None
    if cached:
        shutil.copytree(cached, home, symlinks=True)
        print(f"home copied from {cached}", file=sys.stderr)
        return
    write_memories(home, memories)
    started = time.monotonic()
    subprocess.run([sys.executable, manage, "init", "--name", "Soak", "--quiet"], env=serve_env(home), check=True,
                   cwd=args.repo)
    print(f"init with {len(memories)} memories: {time.monotonic() - started:.1f} s", file=sys.stderr)
    if args.home_cache:
        cache_home(args.home_cache, stamp, home)


def _wait_for_workers(server: int, port: int, seconds: float = 180.0) -> tuple[float, int]:
    """Wait until the gunicorn master has all its workers and each polls a listening socket of `port` (the agents
    then connect to a server that is all there: on one shared socket, what connects while a single worker polls goes
    to that worker); the seconds waited and the workers' threads."""
    started = time.monotonic()
    wanted, workers, polling = None, [], []
    while time.monotonic() - started < seconds:
        tree = roles(server)
        master = next((pid for pid, role in tree.items() if role == "gunicorn master"), None)
        wanted = re.search(r"--workers (\d+)", cmdline(master)) if master else None
        workers = [pid for pid, role in tree.items() if role.startswith("gunicorn worker")]
        sockets = listening(port)
        polling = [pid for pid in workers if polled_sockets(pid) & sockets]
        if wanted and len(workers) == int(wanted.group(1)) and len(polling) == len(workers):
            threads = re.search(r"--threads (\d+)", cmdline(master))
            return time.monotonic() - started, int(threads.group(1)) if threads else 1
        time.sleep(0.2)
    # The agents would start against part of the server, and the crowding would be counted for threads it never read.
    raise SoakError(f"the web workers were not all serving after {seconds:.0f} s: "
                    + (f"{wanted.group(1)} wanted, " if wanted else "no gunicorn master with --workers, ")
                    + f"{len(workers)} running, {len(polling)} polling a listening socket of port {port}")


def run(args) -> dict:
    if args.home_cache:
        claim_cache(args.home_cache)  # before anything is built: a folder that is not the bench's stops the run
    root = Path(tempfile.mkdtemp(prefix="ormah-soak-"))
    home = root / "home"
    manage = str(args.repo / "manage.py")
    everything = corpus(args.memories + 2000, seed=args.seed)
    memories, fresh = everything[:args.memories], everything[args.memories:]
    _make_home(home, memories, args, manage)
    port = free_port()
    log = open(root / "serve.out", "w")  # noqa: SIM115
    server = start_server(args.repo, port, {**serve_env(home, args.log_level), **layout_env(args.layout),
                                            **({"ORMAH_WEB_SOCKETS": args.sockets} if args.sockets else {})}, log)
    result: dict = {"load_before": " ".join(Path("/proc/loadavg").read_text().split()[:3]), "repo": str(args.repo),
                    "repo_given": args.repo.resolve() != REPO}
    try:
        wait_for_port(port, 120)
        result["workers_ready_s"], threads = _wait_for_workers(server.pid, port)
        token = (home / "api_token").read_text().strip()
        password = (home / "ui_password").read_text().strip()
        stats, stop = Stats(), threading.Event()
        per_request = args.connect == "per-request"
        agents = [Agent(i, port, token, memories, fresh, stats, stop, args.seed * 1000 + i, args.mix, per_request)
                  for i in range(args.agents)]
        for agent in agents:
            agent.start()
        result["warm_up_s"] = _warm_up(stats, args.mix)
        cycles: list[dict] = []
        cycler = threading.Thread(target=cycle_loop, args=(port, token, password, args.cycle_every, stop, cycles),
                                  daemon=True)
        cycler.start()
        window = _sample(server.pid, args.seconds, stats, WorkerSplit(port, root / "serve.out", threads), agents)
        stop.set()
        for agent in agents:
            agent.join(timeout=60)
        cycler.join(timeout=60)
        result["layout"] = window["layout"]
        result["summary"] = summary = summarise(stats, window["seconds"], window["rss"], cycles, window["cpu"])
        if args.json:  # every answer of the window: route, start and latency (s, from the window's start: t0)
            answers = [(route, round(end - seconds - stats.t0, 4), round(seconds, 4))
                       for route in stats.latency for seconds, end in zip(stats.latency[route], stats.ended[route])]
            result["trace"] = {
                "requests": sorted(answers, key=lambda r: r[1]),
                "cycles": [(round(c["queued"] - stats.t0, 2), round(c["done"] - stats.t0, 2) if c["done"] else None)
                           for c in cycles]}
        summary["jobs"] = job_times(port, token)
        summary["error_times_s"] = stats.error_times
        summary["web_workers_started_s"] = sorted(window["workers"].values())
        summary["web_workers"] = window["split"]
        summary["balance"] = balance(window["split"])
        summary["listening_sockets"] = window["listeners"]
        summary["crowding"] = window["crowding"] if per_request else {}
        psi = window["psi"]
        summary["pressure"] = {
            "io_full_avg10_max": max((p[1] for p in psi), default=float("nan")),
            "cpu_some_avg10_mean": sum(p[2] for p in psi) / len(psi) if psi else float("nan"), "series": psi}
        result["load_after"] = " ".join(Path("/proc/loadavg").read_text().split()[:3])
        result["serve_tail"] = (root / "serve.out").read_text(errors="replace")[-2000:]
    finally:
        stop_server(server)
        log.close()
        result["machine"] = machine(root)
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return result


def parse_mix(text: str) -> tuple:
    """`--mix`'s value (`remember=30,recall=30,...`) as MIX's ((route, weight), ...), every route in ROUTES' order
    (a route not named weighs 0); another route name is refused."""
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
    parser.add_argument("--mix", type=parse_mix, default=MIX,
                        help="route weights, e.g. remember=0,recall=45,whisper=45,feedback=10 (default 30/30/30/10)")
    parser.add_argument("--connect", choices=("per-request", "keep-alive"), default="per-request",
                        help="per-request (default): a new connection per request, as Ormah's clients make them (the "
                             "hook and the CLI, a process per call; the MCP server, a client per call); keep-alive: "
                             "one connection per agent for the whole run")
    parser.add_argument("--fresh-connections", dest="connect", action="store_const", const="per-request",
                        help="the same as --connect per-request (the default since session 13)")
    parser.add_argument("--layout", help="gunicorn workers x threads, e.g. 1x8 (default: the served default, 2x4)")
    parser.add_argument("--sockets", choices=("shared", "per-worker"),
                        help="ORMAH_WEB_SOCKETS of the server (default: the checkout's default)")
    parser.add_argument("--home-cache", type=Path,
                        help="keep the indexed home here (a folder per memories and --repo code) and start later "
                             "runs of the same from a copy; a new or empty folder, or one the bench made")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repo", type=Path, default=REPO,
                        help="serve the code of this checkout (default: this one), e.g. a git archive of main")
    parser.add_argument("--json", type=Path,
                        help="also write the full result here, with every answer's route, start and latency "
                             "(`python -m bench.soak_trace FILE` reads the tails from it)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary home (and the server's output)")
    parser.add_argument("--log-level", default="WARNING", help="ORMAH_LOG_LEVEL of the server")
    parser.add_argument("--write-docs", action="store_true",
                        help='replace its marked block in the "Soak" section of docs/benchmarks.md')
    args = parser.parse_args(argv)
    try:
        result = run(args)
    except SoakError as exc:
        print(f"soak: {exc}", file=sys.stderr)
        return 2
    text = markdown(result, args, result["machine"])
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
    if args.write_docs:
        write_block("soak", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
