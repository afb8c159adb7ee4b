"""The soak's load model and its report: the route mix, the figures of one run and its "Soak" section."""

from __future__ import annotations

from bench._common import percentile

MIX = (("remember", 0.3), ("recall", 0.3), ("whisper", 0.3), ("feedback", 0.1))
ROUTES = tuple(route for route, _ in MIX)
WARM_UP_SECONDS = 5.0


def _slope_mib_per_min(points: list[tuple[float, float]]) -> float:
    if len(points) < 3:
        return float("nan")
    n = len(points)
    mx = sum(t for t, _ in points) / n
    my = sum(v for _, v in points) / n
    var = sum((t - mx) ** 2 for t, _ in points)
    return 60 * sum((t - mx) * (v - my) for t, v in points) / var if var else float("nan")


def summarise(stats, seconds: float, rss: dict[str, list[tuple[float, float]]], cycles: list[dict],
              cpu: dict[str, float]) -> dict:
    """The figures of one run: per route, RSS per process role, sleep cycles, CPU seconds per role (`cpu`)."""
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
        "cycle_split": _cycle_split(stats, cycles, stats.t0 + seconds),
        "seconds": seconds, "requests": sum(r["requests"] for r in routes.values()),
        "errors": sum(r["errors"] for r in routes.values()), "routes": routes, "error_samples": stats.samples,
        "rss": memory, "cycles_queued": len(cycles), "cycles_done": len(done),
        "cycle_s": [round(c["done"] - c["queued"], 1) for c in done],
        "cpu_s": {role: round(value, 2) for role, value in cpu.items()},
    }


def _cycle_split(stats, cycles: list[dict], end: float) -> dict:
    """Per route, the requests answered while a queued sleep cycle had not finished, and the others: count, p95, p99."""
    windows = [(c["queued"], c["done"] or end) for c in cycles]
    split: dict = {}
    for route in ROUTES:
        pairs = list(zip(stats.latency.get(route, []), stats.ended.get(route, [])))
        during = [v for v, t in pairs if any(a <= t <= b for a, b in windows)]
        outside = [v for v, t in pairs if not any(a <= t <= b for a, b in windows)]
        split[route] = {name: {"requests": len(values), "p95_ms": percentile(values, 95) * 1000,
                               "p99_ms": percentile(values, 99) * 1000}
                        for name, values in (("during", during), ("outside", outside))}
    return split


def _flag(mix: tuple) -> str:
    return ",".join(f"{route}={w:g}" for route, w in mix)


def _describe(mix: tuple) -> str:
    total = sum(w for _, w in mix) or 1
    return ", ".join(f"{route} {100 * w / total:.0f} %" for route, w in mix if w)


def _cpu_line(s: dict) -> str:
    """Cores used over the window per part of the tree (CPU seconds / window seconds), and by the bench's agents."""
    cores = {}
    for role, value in s.get("cpu_s", {}).items():
        part = ("web workers" if role.startswith("gunicorn worker") else "job cluster" if role.startswith("qcluster")
                else "the bench's agents" if role == "bench" else "supervisor and gunicorn master")
        cores[part] = cores.get(part, 0.0) + value / s["seconds"]
    if not cores:
        return ""
    workers = sorted((role, value / s["seconds"]) for role, value in s.get("cpu_s", {}).items()
                     if role.startswith("gunicorn worker"))
    split = f" ({', '.join(f'{role[9:]} {value:.2f}' for role, value in workers)})" if len(workers) > 1 else ""
    return ("CPU over the window, in cores (CPU seconds / wall seconds, 2 cores on this box): "
            + ", ".join(f"{part} {value:.2f}" + (split if part == "web workers" else "")
                        for part, value in sorted(cores.items(), key=lambda kv: -kv[1]))
            + f"; {sum(cores.values()):.2f} in all, {s['requests'] / max(s['seconds'], 1e-9):.1f} requests/s.")


def _keep_alive(args) -> bool:
    return getattr(args, "connect", "per-request") == "keep-alive"


def workers_line(s: dict) -> str:
    """Per web worker: the connections it served, the agents' requests it answered, its CPU (seconds and cores)."""
    rows = s.get("web_workers") or []
    if not rows:
        return ""
    parts = [f"pid {r['pid']}: {r['connections']:,} connections, {r['requests']:,} requests, {r['cpu_s']:.1f} s CPU "
             f"({r['cores']:.2f} cores)" for r in rows]
    b, c = s.get("balance", {}), s.get("crowding") or {}
    sockets = s.get("listening_sockets")
    return ("Web workers" + (f" ({sockets} listening socket{'s' * (sockets != 1)})" if sockets else "") + ": "
            + "; ".join(parts) + (f". The busiest worker's share: {b['max_share_connections']:.0%} of the connections, "
                                  f"{b['max_share_requests']:.0%} of the requests, {b['max_share_cpu_s']:.0%} of the "
                                  f"workers' CPU." if b and len(rows) > 1 else ".")
            + (f" Open connections per worker, mean of {c['samples']} samples: "
               f"{' / '.join(f'{m:.2f}' for m in c['open_mean'])}; in {c['crowded_share']:.0%} of them a worker held "
               f"more connections than threads while another had a thread free; the fullest held "
               f"{c['spread_mean']:.2f} more than the emptiest on average." if c else ""))


def split_cell(s: dict) -> str:
    """The per-run split for a table cell: connections, requests and cores per worker, e.g. "4 / 4 conn., ..."."""
    rows = s.get("web_workers") or []
    return (" / ".join(f"{r['connections']:,}" for r in rows) + " conn.; "
            + " / ".join(f"{r['requests']:,}" for r in rows) + " req.; "
            + " + ".join(f"{r['cores']:.2f}" for r in rows) + " cores")


def markdown(result: dict, args, facts: dict) -> str:
    """The "Soak" section for docs/benchmarks.md."""
    s = result["summary"]
    lines = [
        f"`python -m bench.soak --seconds {args.seconds:g} --agents {args.agents} --memories {args.memories} "
        f"--cycle-every {args.cycle_every:g}" + (f" --mix {_flag(args.mix)}" if args.mix != MIX else "")
        + (" --connect keep-alive" if _keep_alive(args) else "")
        + (f" --layout {args.layout}" if getattr(args, "layout", None) else "")
        + (f" --sockets {args.sockets}" if getattr(args, "sockets", None) else "")
        + (f" --repo {result['repo']}" if result.get("repo_given") else "") + "`"
        f": {args.agents} agents (threads, "
        + ("one keep-alive connection" if _keep_alive(args) else "a new connection per request")
        + " and a whisper session each, no think time) against `ormah serve` on loopback "
        f"({result.get('layout', 'default layout')}, watcher on), a home of {args.memories:,} generated memories (bench/_common.py corpus, used "
        f"within the last ten days) plus what the agents write. Mix: {_describe(args.mix)}. The sleep cycle was "
        f"queued on the job cluster from the jobs screen every {args.cycle_every} s (never two at once). "
        f"Measured window {s['seconds']:.0f} s after a {result.get('warm_up_s', WARM_UP_SECONDS):.0f} s warm-up "
        f"(at least {WARM_UP_SECONDS:.0f} s, and until every route had answered once).",
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
    if s.get("cycle_split"):
        lines += ["", "The same requests split by whether a queued sleep cycle was still running when they were "
                      "answered:", "",
                  "| Route | during a cycle: requests, p95 / p99 | otherwise: requests, p95 / p99 |", "|---|---|---|"]
        for route, parts in s["cycle_split"].items():
            cells = [f"{p['requests']:,}, {p['p95_ms']:.0f} / {p['p99_ms']:.0f} ms" if p["requests"] else "-"
                     for p in (parts["during"], parts["outside"])]
            lines.append(f"| {route} | {cells[0]} | {cells[1]} |")
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
    started = s.get("web_workers_started_s", [])
    restarts = [t for t in started if t > min(started, default=0.0)]  # the first sample saw the first workers
    if restarts:
        lines += ["", f"A gunicorn worker was replaced at {', '.join(f'{t:.0f} s' for t in restarts)} of the window; "
                      f"errors at {', '.join(f'{t:.0f} s' for t in s['error_times_s'][:10])}."]
    if "pressure" in s:
        lines += ["", f"Pressure (Linux PSI): I/O full avg10 peaked at {s['pressure']['io_full_avg10_max']:.1f} %, "
                      f"CPU some avg10 averaged {s['pressure']['cpu_some_avg10_mean']:.1f} %."]
    if _cpu_line(s):
        lines += ["", _cpu_line(s)]
    if workers_line(s):
        lines += ["", workers_line(s)]
    if s["error_samples"]:
        lines += ["", "First errors: " + "; ".join(f"`{e}`" for e in s["error_samples"])]
    return "\n".join(lines)
