"""The memory of the `ormah serve` process tree, per process, after warm-up and after a sleep cycle.

    python -m bench.serve_rss [--memories 1000] [--before /path/to/other/checkout] [--layouts 1x8,2x4] [--write-docs]

A fresh temporary home gets `--memories` generated memories (bench/_common.py corpus) and `ormah init`; then
`ormah serve` starts (its defaults: supervisor, gunicorn master + 2 workers x 4 threads, the django-q2 cluster with 1
job worker, the watcher in a web worker). Warm-up: `--requests` each of remember, recall and whisper over the API,
and the graph page's data once. The tree is read from /proc: RSS, PSS (shared pages divided among the processes
that map them: the sum of PSS is what the tree costs the machine) and USS (pages only this process maps). As root, it
also counts the tree's distinct physical pages (/proc/PID/pagemap), each once however many processes map it: the
tree's memory whatever else runs, which PSS is only on an otherwise idle machine. Then the
sleep cycle is queued from the jobs screen, as a user would, and the tree is read again when its last job finished.

`--before DIR` runs the same procedure first with the code of another checkout (e.g. main before a change), so
both columns come from the same minute of the same machine. `--layouts` measures this checkout once per gunicorn
layout (workers x threads, through ORMAH_WEB_WORKERS and ORMAH_WEB_THREADS) instead of once with its default; with
`--before` too, each layout is measured with the other checkout and then with this one.
`--write-docs` replaces its marked block in the "Serve tree RSS" section of docs/benchmarks.md. This is a benchmark, not a test: nothing
here asserts.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import REPO, corpus, machine, write_block
from bench.serve_tree import (cycle_runs, free_port, job_workers, layout_env, roles, serve_env, start_server,
                              stop_server, ui_session, wait_for_port, write_memories)

SECTION = "Serve tree RSS"
CYCLE_TIMEOUT_SECONDS = 900.0
PAGE = os.sysconf("SC_PAGE_SIZE")
FRAME_MASK = (1 << 55) - 1  # /proc/PID/pagemap: bits 0-54 of an entry hold the page's frame number


def memory_kib(pid: int) -> dict[str, int] | None:
    """RSS, PSS and USS (private clean + dirty) of one process in KiB, from /proc/PID/smaps_rollup."""
    fields: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            key, _, rest = line.partition(":")
            if key in ("Rss", "Pss", "Private_Clean", "Private_Dirty"):
                fields[key] = int(rest.split()[0])
    except (OSError, ValueError):
        return None
    return {"rss": fields["Rss"], "pss": fields["Pss"], "uss": fields["Private_Clean"] + fields["Private_Dirty"]}


def tree_pages_kib(pids) -> int | None:
    """KiB of the distinct physical pages the processes map, each counted once however many map it: what the tree
    holds whatever else runs on the machine (PSS falls when other processes map the same libraries). From
    /proc/PID/pagemap, whose frame numbers only root reads; None otherwise."""
    frames: set[int] = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/pagemap", "rb") as pagemap:
                for line in maps:
                    start, end = (int(x, 16) for x in line.split()[0].split("-"))
                    if start >= 1 << 47:  # [vsyscall]
                        continue
                    pagemap.seek(start // PAGE * 8)
                    entries = pagemap.read((end - start) // PAGE * 8)
                    for entry in struct.unpack(f"{len(entries) // 8}Q", entries):
                        if entry >> 63:  # present
                            frames.add(entry & FRAME_MASK)
        except OSError:
            continue
    frames.discard(0)  # a frame number read without the right to see it
    return len(frames) * PAGE // 1024 if frames else None


def snapshot(supervisor: int, *, pages: bool = False) -> dict:
    rows = {}
    tree = roles(supervisor, name_cluster_children=True)
    for pid, role in tree.items():
        m = memory_kib(pid)
        if m is not None:
            rows[role] = m
    return {"rows": rows, "load": " ".join(Path("/proc/loadavg").read_text().split()[:3]),
            "pages_kib": tree_pages_kib(tree) if pages else None}


def _call(port: int, token: str, method: str, path: str, body: dict | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None,
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def warm_up(port: int, token: str, password: str, memories: list, fresh: list, requests: int) -> int:
    """Each agent route `requests` times, and the graph data once; returns how many answers were not 2xx."""
    failures = 0
    for i in range(requests):
        m, q = fresh[i % len(fresh)], memories[(7 * i) % len(memories)]
        query = " ".join(q.content.split()[:4])
        calls = [("/api/agent/remember", {"content": m.content, "type": m.type, "title": m.title,
                                          "tags": list(m.tags), "space": m.space, "source": "bench:serve_rss"}),
                 ("/api/agent/recall", {"query": query, "limit": 10}),
                 ("/api/agent/whisper", {"prompt": f"What do we know about {query}?", "session_id": "rss"})]
        for path, body in calls:
            status, _ = _call(port, token, "POST", path, body)
            failures += status >= 300
    ui = ui_session(port, password)
    failures += ui.get("/graph/data/").status_code >= 300
    ui.close()
    return failures


def measure(repo: Path, args, label: str, layout: str | None = None) -> dict:
    """One run with the code of `repo` (and a gunicorn layout): warm-up snapshot, sleep cycle, snapshot."""
    root = Path(tempfile.mkdtemp(prefix="ormah-rss-"))
    home = root / "home"
    everything = corpus(args.memories + args.requests, seed=args.seed)
    memories, fresh = everything[:args.memories], everything[args.memories:]
    write_memories(home, memories)
    subprocess.run([sys.executable, str(repo / "manage.py"), "init", "--name", "RSS", "--quiet"], env=serve_env(home),
                   check=True, cwd=repo)
    port = free_port()
    log = open(root / "serve.out", "w")  # noqa: SIM115
    server = start_server(repo, port, {**serve_env(home), **layout_env(layout)}, log)
    result: dict = {"label": label, "repo": str(repo)}
    try:
        wait_for_port(port, 180)
        token = (home / "api_token").read_text().strip()
        password = (home / "ui_password").read_text().strip()
        result["warm_up_failures"] = warm_up(port, token, password, memories, fresh, args.requests)
        time.sleep(2.0)  # the cluster's pollers settle
        result["warm"] = snapshot(server.pid, pages=True)
        ui = ui_session(port, password)
        cycle_worker = job_workers(server.pid)
        started = time.monotonic()
        ui.post("/jobs/sleep-cycle/")
        ui.close()
        peak: dict[str, int] = {}
        while time.monotonic() - started < CYCLE_TIMEOUT_SECONDS and not cycle_runs(port, token):
            for role, m in snapshot(server.pid)["rows"].items():
                peak[role] = max(peak.get(role, 0), m["rss"])
            time.sleep(1.0)
        result["cycle_seconds"] = round(time.monotonic() - started, 1)
        result["cycle_done"] = bool(cycle_runs(port, token))
        # A worker that names itself is replaced after its task (settings.Q_CLUSTER "recycle"): read the tree
        # once the cycle's worker has gone and its successor is up, as a user's server stands after the cycle.
        wait = time.monotonic() + 60
        while cycle_worker and time.monotonic() < wait and (job_workers(server.pid) & cycle_worker
                                                             or not job_workers(server.pid)):
            time.sleep(0.2)
        time.sleep(2.0)
        result["after_cycle"] = snapshot(server.pid, pages=True)
        result["peak_rss_during_cycle"] = peak
    finally:
        stop_server(server)
        log.close()
        result["machine"] = machine(root)
        shutil.rmtree(root, ignore_errors=True)
    return result


def _mib(kib: int) -> str:
    return f"{kib / 1024:.0f}"


def markdown(runs: list[dict], args) -> str:
    facts = runs[-1]["machine"]
    roles_seen = list(dict.fromkeys(role for run in runs for snap in ("warm", "after_cycle")
                                    for role in run[snap]["rows"]))
    head = ["Process"]
    for run in runs:
        head += [f"{run['label']}: warm RSS / PSS / USS", f"{run['label']}: after a sleep cycle RSS / PSS / USS"]
    lines = [f"`python -m bench.serve_rss --memories {args.memories} --requests {args.requests}"
             + (" --before ..." if args.before else "") + (f" --layouts {args.layouts}" if args.layouts else "")
             + "`: `ormah serve` on a fresh home of "
             f"{args.memories:,} generated memories; warm-up = {args.requests} each of remember, recall and whisper "
             "plus the graph data; then one sleep cycle queued from the jobs screen. MiB from /proc/PID/smaps_rollup: "
             "RSS counts shared pages in every process that maps them, PSS divides them among those processes (the "
             "sum of PSS is what the tree costs the machine), USS is what only that process holds.", "",
             "| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for role in roles_seen:
        cells = [role]
        for run in runs:
            for snap in ("warm", "after_cycle"):
                m = run[snap]["rows"].get(role)
                cells.append(f"{_mib(m['rss'])} / {_mib(m['pss'])} / {_mib(m['uss'])}" if m else "-")
        lines.append("| " + " | ".join(cells) + " |")
    cells = ["**tree, sum**"]
    for run in runs:
        for snap in ("warm", "after_cycle"):
            rows = run[snap]["rows"].values()
            cells.append("**" + " / ".join(_mib(sum(m[k] for m in rows)) for k in ("rss", "pss", "uss")) + "**")
    lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for run in runs:
        peak = run["peak_rss_during_cycle"]
        lines.append(f"- {run['label']}: load average {run['warm']['load']} (warm) / {run['after_cycle']['load']} "
                     f"(after the cycle); sleep cycle {'finished' if run['cycle_done'] else 'NOT finished'} in "
                     f"{run['cycle_seconds']:.0f} s; peak RSS during it: "
                     + ", ".join(f"{role} {_mib(v)}" for role, v in peak.items() if v > 100 * 1024)
                     + f"; warm-up answers not 2xx: {run['warm_up_failures']}"
                     + ("" if run["warm"].get("pages_kib") is None else
                        f"; the tree's distinct pages (each counted once, whatever else runs): "
                        f"{_mib(run['warm']['pages_kib'])} MiB warm, {_mib(run['after_cycle']['pages_kib'])} after "
                        "the cycle") + ".")
    lines += ["", f"Machine: {facts['cpu']}, {facts['cpus']} CPUs, {facts['ram']}, {facts['os']}, "
                  f"Python {facts['python']}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=20, help="warm-up requests per route")
    parser.add_argument("--before", type=Path, help="another checkout to measure first (the 'before' column)")
    parser.add_argument("--layouts", help="gunicorn layouts of this checkout to measure, e.g. 1x8,2x4")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the full result here")
    parser.add_argument("--write-docs", action="store_true",
                        help=f'replace its marked block in the "{SECTION}" section of docs/benchmarks.md')
    args = parser.parse_args(argv)
    runs = []
    for layout in args.layouts.split(",") if args.layouts else [None]:
        if args.before:
            runs.append(measure(args.before.resolve(), args, " ".join(filter(None, ["before", layout])), layout))
        runs.append(measure(REPO, args, " ".join(filter(None, ["after" if args.before else "", layout]))
                            or "this checkout", layout))
    text = markdown(runs, args)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2, default=str))
    if args.write_docs:
        write_block("serve_rss", text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
