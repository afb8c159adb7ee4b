"""Where a served request's CPU goes, by route: a CPU-time sampling profile of the soak's mix, in process.

    python -m bench.request_sample [--home DIR] [--requests 1200] [--interval-ms 2] [--top 25] [--json OUT]

The store and the requests are bench/request_cpu.py's (a copy of a home `bench.serve_cpu --keep` or `bench.soak
--home-cache` left, else a fresh one of `--memories`; the soak's requests through Django's test client, a remember
between reads as in the soak). After the same warm-up, `--requests` requests are drawn in the soak's shares and a
CPU-time timer (ITIMER_PROF: it ticks with the process's user + system time, so a wait on a lock or a disk costs no
sample) takes the Python stack every `--interval-ms` of CPU. Each sample is charged to the route being served.
Per route it prints the process CPU per request (time.process_time around each call), the samples, and:
  layer    the model when onnxruntime or fastembed is on the stack, else the innermost frame's package (SQL: Django's
           cursor calls, inside which SQLite's C code runs; ours: memory/, whisper/, ormah_site/; numpy; ...);
  sql      the SQL samples by the innermost function of ours on the stack (the one that sent the statement);
  self     the innermost Python function of the sample (C code it calls, SQLite's or onnxruntime's, counts in it),
           and the same with its caller;
  ours     the innermost function of Ormah's code on the stack: where our code spends, its callees in libraries
           included;
  inside   the share of samples with a function of that name anywhere on the stack (inclusive), for the names
           given with `--inside` (a function name, or path:function as printed).
Also the garbage collector's CPU a request (gc.callbacks around each collection) and its longest pass, by generation,
and a full collection's CPU after the warm-up (`--gc-freeze`: then gc.freeze(), and the mix runs with those objects
frozen; `--gc-threshold N`: the young generation's threshold for the mix, Python's 700 by default).
A sample is taken when the interpreter next checks for the signal, on the Python frame running then: a share of a
few samples says little (time such a function in a loop instead). The kernel's timer ticks at its own rate (on
this box ~4 ms of CPU a sample whatever the interval asked); the handler costs ~20 us a sample.
A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter

from bench.request_cpu import ROUTES, Agent, setup  # sets the web worker's thread counts before numpy loads
from bench.soak_report import MIX

OURS = ("/memory/", "/whisper/", "/ormah_site/")
DEFAULT_INSIDE = (
    "embed_query", "embed", "execute", "_declared_tokenize", "token_current", "token_matches", "get_conf",
    "doc_counts_marked", "_tokens", "close_old_connections",
)


def layer_of(frame) -> str:
    """The sample's layer: the model when onnxruntime or fastembed is on the stack, else by the innermost frame's
    package (SQLite's C code runs inside Django's cursor calls, so a sample there is "sql")."""
    f = frame
    while f is not None:
        path = f.f_code.co_filename
        if "/onnxruntime/" in path or "/fastembed/" in path:
            return "model (onnxruntime, fastembed)"
        f = f.f_back
    path = frame.f_code.co_filename
    if any(part in path for part in OURS):
        return "ours (memory, whisper, ormah_site)"
    if "/site-packages/" not in path:
        return "bench" if "/bench/" in path else "python's stdlib"
    package = path.split("/site-packages/", 1)[1].split("/", 1)[0]
    if package == "django":
        rest = path.split("/site-packages/django/", 1)[1]
        if rest.startswith("db/backends/") or rest == "db/utils.py":
            return "sql (django.db's cursor: SQLite's execute and fetch)"
        if rest.startswith("db/"):
            return "django's ORM (models, queries)"
        return "django (http, handlers, middleware, test client)"
    return package


def _where(code) -> str:
    path = code.co_filename
    for part in OURS:
        if part in path:
            path = part.strip("/") + "/" + path.split(part, 1)[1]
            break
    else:
        path = "/".join(path.split("/")[-2:])
    return f"{path}:{code.co_name}"


class Sampler:
    """Stacks taken on SIGPROF, charged to `self.route` (None: not counted)."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.route: str | None = None
        self.self_: dict[str, Counter] = {}
        self.ours: dict[str, Counter] = {}
        self.names: dict[str, Counter] = {}
        self.samples: Counter = Counter()
        self.pairs: dict[str, Counter] = {}
        self.layers: dict[str, Counter] = {}
        self.sql_by: dict[str, Counter] = {}

    def _on_tick(self, signum, frame) -> None:
        route = self.route
        if route is None or frame is None:
            return
        self.samples[route] += 1
        layer = layer_of(frame)
        self.layers.setdefault(route, Counter())[layer] += 1
        self.self_.setdefault(route, Counter())[_where(frame.f_code)] += 1
        if frame.f_back is not None:
            self.pairs.setdefault(route, Counter())[
                f"{_where(frame.f_code)} <- {_where(frame.f_back.f_code)}"] += 1
        seen: set[str] = set()
        ours_found = False
        f = frame
        while f is not None:
            code = f.f_code
            if not ours_found and any(part in code.co_filename for part in OURS):
                self.ours.setdefault(route, Counter())[_where(code)] += 1
                if layer.startswith("sql"):
                    self.sql_by.setdefault(route, Counter())[_where(code)] += 1
                ours_found = True
            seen.add(code.co_name)
            seen.add(_where(code))
            f = f.f_back
        if not ours_found:
            self.ours.setdefault(route, Counter())["(none of ours)"] += 1
        self.names.setdefault(route, Counter()).update(seen)

    def start(self) -> None:
        signal.signal(signal.SIGPROF, self._on_tick)
        signal.setitimer(signal.ITIMER_PROF, self.interval, self.interval)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        signal.signal(signal.SIGPROF, signal.SIG_DFL)


def run(args: argparse.Namespace, agent: Agent) -> dict:
    for _ in range(3):  # the warm-up of bench.request_cpu: the model, the scorer, the URL conf, the matrix
        for route in ROUTES:
            agent.call(route)
    for label in ("a full collection after the warm-up", "and another at once"):
        started = time.process_time()
        gc.collect()
        print(f"{label}: {1000 * (time.process_time() - started):.1f} ms of CPU, {len(gc.get_objects())} objects "
              f"tracked, {gc.get_freeze_count()} frozen")
    if args.gc_threshold:  # the young generation's threshold (Python's 700): fewer collections, each walking more
        gc.set_threshold(args.gc_threshold, *gc.get_threshold()[1:])
    if args.gc_freeze:  # what a worker's post-fork gc.freeze() would leave the collector to walk
        gc.freeze()
        started = time.process_time()
        gc.collect()
        print(f"after gc.freeze(): a full collection {1000 * (time.process_time() - started):.1f} ms of CPU, "
              f"{gc.get_freeze_count()} objects frozen")
    routes, weights = zip(*MIX)
    rng = random.Random(args.seed)
    sampler = Sampler(args.interval_ms / 1000)
    cpu: dict[str, list[float]] = {}
    load_before = os.getloadavg()[0]
    collected = {0: [0, 0.0], 1: [0, 0.0], 2: [0, 0.0]}
    longest = {0: 0.0, 1: 0.0, 2: 0.0}
    began = [0.0]

    def on_gc(phase: str, info: dict) -> None:
        if phase == "start":
            began[0] = time.process_time()
        else:
            spent = time.process_time() - began[0]
            collected[info["generation"]][0] += 1
            collected[info["generation"]][1] += spent
            longest[info["generation"]] = max(longest[info["generation"]], spent)

    gc.callbacks.append(on_gc)
    sampler.start()
    try:
        for _ in range(args.requests):
            route = rng.choices(routes, weights)[0]
            sampler.route = route
            started = time.process_time()
            agent.call(route)
            cpu.setdefault(route, []).append((time.process_time() - started) * 1000)
            sampler.route = None
    finally:
        sampler.stop()
        gc.callbacks.remove(on_gc)
    load_after = os.getloadavg()[0]
    every = [ms for values in cpu.values() for ms in values]
    print(f"{args.requests} requests of the soak's mix, a sample every {args.interval_ms} ms of CPU; load average "
          f"{load_before:.2f} -> {load_after:.2f}")
    print(f"CPU a request over the mix: mean {statistics.mean(every):.2f} ms, p50 {statistics.median(every):.2f} ms")
    print(f"garbage collections (thresholds {gc.get_threshold()}): " + "; ".join(
        f"generation {g} {k} x, {1000 * spent / args.requests:.3f} ms a request, longest {1000 * longest[g]:.1f} ms"
        for g, (k, spent) in collected.items()))
    out: dict = {"requests": args.requests, "load": [load_before, load_after], "routes": {},
                 "gc": {g: {"collections": k, "cpu_s": spent, "longest_s": longest[g]} for g, (k, spent) in
                        collected.items()}}
    for route in routes:
        values = cpu.get(route, [])
        if not values:
            continue
        n = sampler.samples[route]
        print(f"\n## {route}: {len(values)} requests, CPU mean {statistics.mean(values):.2f} / p50 "
              f"{statistics.median(values):.2f} ms; {n} samples")
        for title, counter in (("layer", sampler.layers.get(route, Counter())),
                               ("sql, by the function of ours that sent it", sampler.sql_by.get(route, Counter())),
                               ("self", sampler.self_.get(route, Counter())),
                               ("self <- its caller", sampler.pairs.get(route, Counter())),
                               ("ours", sampler.ours.get(route, Counter()))):
            print(f"  {title}:")
            for name, k in counter.most_common(args.top):
                print(f"    {100 * k / n:5.1f} %  {name}")
        names = sampler.names.get(route, Counter())
        print("  inside:")
        for name in args.inside:
            print(f"    {100 * names[name] / n:5.1f} %  {name}")
        out["routes"][route] = {
            "requests": len(values), "cpu_ms_mean": statistics.mean(values), "samples": n,
            "layers": dict(sampler.layers.get(route, Counter())),
            "self": dict(sampler.self_.get(route, Counter()).most_common(200)),
            "ours": dict(sampler.ours.get(route, Counter()).most_common(200)),
            "inside": {name: names[name] for name in args.inside}}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--home", help="start from a copy of the folder a `bench.serve_cpu --keep` run printed")
    parser.add_argument("--requests", type=int, default=1200)
    parser.add_argument("--interval-ms", type=float, default=2.0)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--inside", action="append", default=None,
                        help="a function name (or module:function) whose inclusive share to print; repeatable")
    parser.add_argument("--json", help="also write the counts here")
    parser.add_argument("--gc-freeze", action="store_true",
                        help="gc.freeze() after the warm-up: the objects made so far are never walked again")
    parser.add_argument("--gc-threshold", type=int, default=0,
                        help="the young generation's collection threshold for the mix (default: Python's, 700)")
    args = parser.parse_args(argv)
    args.inside = args.inside or list(DEFAULT_INSIDE)
    home, stored, fresh = setup(args.memories, args.home)
    try:
        from django.test import Client

        token = (home / "api_token").read_text().strip()
        out = run(args, Agent(Client(), token, stored, fresh))
        if args.json:
            with open(args.json, "w") as handle:
                json.dump(out, handle, indent=1)
        return 0
    finally:
        import shutil

        shutil.rmtree(home.parent, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
