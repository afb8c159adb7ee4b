"""Does a served web worker's memory level off? The soak's request mix through the real WSGI application, in
process, for many thousand requests, with the process's memory read every `--every` requests.

    python -m bench.serve_growth [--memories 2000] [--requests 20000] [--threads 4] [--every 1000]
                                 [--mix remember=30,recall=30,whisper=30,feedback=10] [--cycle-every 0]
                                 [--tracemalloc] [--top 25] [--json FILE]

A fresh temporary home gets `--memories` generated memories and `ormah init` (bench/request_cpu.py's `setup`, the
soak's corpus, its files written by this process, so memory/store.py's file caches start with every one); then
this process becomes a web worker as `ormah serve` runs one: MALLOC_ARENA_MAX=1 (the process starts itself again
with it when it is not set), one thread for numpy and onnxruntime, Django set up, and `--threads` request threads
(gunicorn's 4 per worker), each its own soak agent (bench/soak_calls.py: remember 30 %, recall 30 %, whisper 30 %,
feedback 10 %, each agent with its own whisper session) calling `ormah_site.wsgi.application` with a WSGI environ
of its own (middleware, the token check, ninja, the route, the response closed so `request_finished` runs, as
gunicorn does). `--cycle-every N` runs the sleep cycle (`manage.py tasks run-all`, a process of its own as the job
cluster is) after every N requests, while the threads go on. `--mix remember=0,...` keeps the store's size fixed,
which separates what a worker holds per memory stored (the vector matrix, the file caches) from what it holds per
request served (the caches of the terms it has read).

At each checkpoint: requests, memories stored, the process's RSS and its anonymous part (/proc/self/status), glibc's
heap (mallinfo2: mapped = arena + mmapped blocks, in use, free), the blocks Python's allocator holds
(`sys.getallocatedblocks`) and pymalloc's arenas, the objects the collector tracks by type (the types that grew
since the last checkpoint are printed), the entries of the caches that grow with the terms and files a worker meets
(the document counts, the tokens per term, memory/store.py's file caches), SQLite's own memory
(`sqlite3_memory_used` of the driver Django loaded: page caches, prepared statements), CPU seconds of the process,
the load average. With `--tracemalloc` (about twice the CPU) the traced Python allocations too, and at the end the
lines whose held bytes grew most from the first checkpoint and over the second half (snapshots kept on disk, not in
the process). A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import io
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

if __name__ == "__main__":  # the environment `ormah serve` gives its tree
    if os.environ.get("MALLOC_ARENA_MAX") is None:
        os.environ["MALLOC_ARENA_MAX"] = "1"  # glibc reads it at start: run again with it
        os.execv(sys.executable, [sys.executable, "-m", "bench.serve_growth", *sys.argv[1:]])
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # read when numpy loads (bench._common imports it)
    os.environ.setdefault("ORMAH_EMBEDDING_THREADS", "1")

from bench._common import REPO  # noqa: E402
from bench.soak import parse_mix  # noqa: E402
from bench.soak_calls import RouteCalls  # noqa: E402
from bench.soak_report import MIX, ROUTES  # noqa: E402

OK = (200, 201)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks",
                 "keepcost")]


def heap_kib() -> dict[str, int]:
    """glibc's heap (mallinfo2, glibc 2.33+): mapped (the arenas plus blocks mmapped alone), in use, free within."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallinfo2.restype = _MallInfo2
        info = libc.mallinfo2()
    except (OSError, AttributeError):
        return {}
    return {"mapped": (info.arena + info.hblkhd) // 1024, "in_use": (info.uordblks + info.hblkhd) // 1024,
            "free": info.fordblks // 1024}


def pymalloc_kib() -> dict[str, int]:
    """Python's small-object allocator (`sys._debugmallocstats`, written to the C stderr): the arenas it maps (1 MiB
    each in 3.11, given back only when wholly empty) and the bytes of the blocks in use within them."""
    with tempfile.TemporaryFile() as out:
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(out.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        text = out.read().decode(errors="replace")
    found = {}
    for key, pattern in (("arenas", r"(\d+) arenas \* \d+ bytes/arena\s+=\s+([\d,]+)"),
                         ("in_blocks", r"# bytes in allocated blocks\s+=\s+([\d,]+)")):
        match = re.search(pattern, text)
        if match:
            found[key] = int(match.group(match.lastindex).replace(",", "")) // 1024
    return found


def status_kib() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
            out[key] = int(rest.split()[0])
    return out


def _sqlite_memory_used():
    """`sqlite3_memory_used` of the SQLite library Django's connections use, as a callable (None if not found)."""
    from django.db.backends.sqlite3 import base

    module = sys.modules.get(base.Database.__name__.rpartition(".")[0] + "._sqlite3") or sys.modules.get("_sqlite3")
    candidates = [getattr(module, "__file__", None)]
    candidates += [line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines()
                   if "libsqlite3" in line]
    for path in filter(None, candidates):
        try:
            fn = ctypes.CDLL(path).sqlite3_memory_used
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_int64
        return fn
    return None


def _environ(path: str, body: bytes, token: str) -> dict:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": path, "SCRIPT_NAME": "", "QUERY_STRING": "",
            "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(body)), "HTTP_HOST": "127.0.0.1",
            "HTTP_AUTHORIZATION": f"Bearer {token}", "HTTP_CONNECTION": "close", "REMOTE_ADDR": "127.0.0.1",
            "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "8787", "SERVER_PROTOCOL": "HTTP/1.1",
            "wsgi.version": (1, 0), "wsgi.url_scheme": "http", "wsgi.input": io.BytesIO(body),
            "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": True, "wsgi.run_once": False}


class Agent(RouteCalls):
    """A soak agent (bench/soak_calls.py) on a request thread of its own, calling the WSGI application."""

    def __init__(self, index: int, app, token: str, memories, fresh, seed: int) -> None:
        self.app, self.token = app, token
        self.index, self.label, self.source = index, f"agent {index}", f"growth-{index}"
        self.memories, self.fresh = memories, fresh
        self.rng = random.Random(seed)
        self.session = f"growth-agent-{index}"
        self.last_ids: list[str] = []
        self.last_log: int | None = None
        self.errors: list[str] = []

    def _call(self, route: str, path: str, body: dict) -> dict | None:
        raw = json.dumps(body).encode()
        status: list[int] = []
        result = self.app(_environ(path, raw, self.token), lambda s, headers, exc=None: status.append(int(s[:3])))
        try:
            content = b"".join(result)
        finally:
            if hasattr(result, "close"):
                result.close()  # request_finished: Django's end of a request, as gunicorn calls it
        if status[0] not in OK:
            if len(self.errors) < 10:
                self.errors.append(f"{route} {status[0]} {content[:200]!r}")
            return None
        return json.loads(content) if content else None


def checkpoint(done: int, started_cpu: float, memory_used, count_memories, traced: bool) -> dict:
    import tracemalloc

    gc.collect()  # what stays is what something still holds
    objects = gc.get_objects()
    status = status_kib()
    row = {"requests": done, "memories": count_memories(), "rss_kib": status.get("VmRSS"),
           "anon_kib": status.get("RssAnon"), "heap_kib": heap_kib(), "py_blocks": sys.getallocatedblocks(),
           "pymalloc_kib": pymalloc_kib(), "gc_objects": len(objects),
           "types": Counter(type(o).__qualname__ for o in objects),
           "sqlite_kib": memory_used() // 1024 if memory_used else None,
           "cpu_s": round(time.process_time() - started_cpu, 1), "load": round(os.getloadavg()[0], 2),
           "time": time.strftime("%H:%M:%S", time.gmtime())}
    row["caches"] = cache_entries()
    if traced:
        row["traced_kib"] = tracemalloc.get_traced_memory()[0] // 1024
    del objects
    return row


def cache_entries() -> dict[str, int]:
    """Entries of the per-process caches that grow with the requests or the memories a worker has seen."""
    from memory import store
    from memory.backends import sqlite_fulltext
    from memory.search import candidates

    held = list(candidates._df.values())
    return {"doc_counts": sum(len(h.counts) for h in held), "tokens": len(sqlite_fulltext._TOKENS),
            "paths": len(store._LAST_PATH), "file_ids": len(store._ID_CACHE)}


def _count_memories():
    from django.db import connection

    from memory.search.filters import NODE_TABLE

    def count() -> int:
        with connection.cursor() as cur:
            cur.execute(f"SELECT COUNT(*) FROM {NODE_TABLE}")
            return cur.fetchone()[0]
    return count


def run(args, home: Path, stored: list, fresh: list) -> dict:
    import tracemalloc

    from ormah_site.wsgi import application

    token = (home / "api_token").read_text().strip()
    agents = [Agent(i, application, token, stored, fresh, 1000 + i) for i in range(args.threads)]
    for agent in agents:  # warm-up, one thread: the model, the URL conf, the matrix, every route once
        for route in ROUTES:
            agent.step(route, 0)
    memory_used, count = _sqlite_memory_used(), _count_memories()
    routes, weights = zip(*args.mix)
    lock, rows = threading.Lock(), []
    next_cycle = [args.cycle_every or 0]
    cycles: list[subprocess.Popen] = []
    started_cpu = time.process_time()
    if args.tracemalloc:
        tracemalloc.start(args.frames)
    rows.append(checkpoint(0, started_cpu, memory_used, count, args.tracemalloc))
    snapshots = Path(tempfile.mkdtemp(prefix="ormah-growth-snapshots-"))
    middle = (args.requests // 2) // args.every * args.every  # the checkpoint the second diff starts from

    def keep_snapshot(name: str) -> None:
        """Written to disk, not held: a snapshot in memory would be part of the RSS read next."""
        if args.tracemalloc:
            tracemalloc.take_snapshot().dump(str(snapshots / name))

    keep_snapshot("first")
    print(_line(rows[-1]), flush=True)
    gate = threading.Condition(lock)
    state = {"issued": 0, "in_flight": 0, "paused": False}

    def serve(agent: Agent) -> None:
        n = 0
        while True:
            with gate:
                while state["paused"]:
                    gate.wait()
                if state["issued"] >= args.requests:
                    return
                state["issued"] += 1
                state["in_flight"] += 1
                ticket = state["issued"]
            n += 1
            agent.step(agent.rng.choices(routes, weights)[0], n)
            with gate:
                state["in_flight"] -= 1
                gate.notify_all()
                if args.cycle_every and ticket >= next_cycle[0] and not any(p.poll() is None for p in cycles):
                    next_cycle[0] = ticket + args.cycle_every
                    cycles.append(subprocess.Popen([sys.executable, str(REPO / "manage.py"), "tasks", "run-all"],
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
                if ticket % args.every == 0:
                    # the other threads end the request they are in and start none: the checkpoint reads a still heap
                    state["paused"] = True
                    while state["in_flight"]:
                        gate.wait()
                    rows.append(checkpoint(state["issued"], started_cpu, memory_used, count, args.tracemalloc))
                    print(_line(rows[-1]), flush=True)
                    if len(rows) > 1:
                        grown = (rows[-1]["types"] - rows[-2]["types"]).most_common(args.types)
                        print("  objects the collector tracks, grown since the last checkpoint: "
                              + ", ".join(f"{name} {n:+}" for name, n in grown), flush=True)
                    if ticket == middle:
                        keep_snapshot("middle")
                    state["paused"] = False
                    gate.notify_all()

    threads = [threading.Thread(target=serve, args=(agent,), name=f"request-{agent.index}") for agent in agents]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for process in cycles:
        process.wait()
    result = {"rows": rows, "errors": [e for agent in agents for e in agent.errors], "cycles": len(cycles),
              "cycle_codes": [p.returncode for p in cycles]}
    if args.tracemalloc:
        last = tracemalloc.take_snapshot()
        tracemalloc.stop()
        key = "lineno" if args.frames == 1 else "traceback"
        for name, since in (("grown", "first"), ("grown_second_half", "middle")):
            if (snapshots / since).exists():
                before = tracemalloc.Snapshot.load(str(snapshots / since))
                result[name] = [(_where(stat.traceback), stat.size_diff // 1024, stat.count_diff)
                                for stat in last.compare_to(before, key)[:args.top]]
    shutil.rmtree(snapshots, ignore_errors=True)
    return result


def _where(traceback) -> str:
    return " <- ".join(str(frame).replace(str(REPO) + "/", "").replace(sys.prefix + "/", "")
                       for frame in traceback)


def _line(row: dict) -> str:
    heap = row["heap_kib"]
    return (f"{row['time']} req {row['requests']:>6} mem {row['memories']:>6} | RSS {row['rss_kib'] / 1024:6.1f} "
            f"anon {row['anon_kib'] / 1024:6.1f} MiB | heap mapped {heap.get('mapped', 0) / 1024:6.1f} in use "
            f"{heap.get('in_use', 0) / 1024:6.1f} free {heap.get('free', 0) / 1024:5.1f} | py blocks "
            f"{row['py_blocks']:>8} objects {row['gc_objects']:>7} | sqlite "
            f"{(row['sqlite_kib'] or 0) / 1024:5.1f} MiB"
            + (f" | traced {row['traced_kib'] / 1024:6.1f} MiB" if "traced_kib" in row else "")
            + (f" | pymalloc arenas {row['pymalloc_kib'].get('arenas', 0) / 1024:5.1f} in blocks "
               f"{row['pymalloc_kib'].get('in_blocks', 0) / 1024:5.1f}" if row.get("pymalloc_kib") else "")
            + " | kept: " + " ".join(f"{name} {n}" for name, n in row["caches"].items())
            + f" | CPU {row['cpu_s']:7.1f} s load {row['load']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=20000)
    parser.add_argument("--threads", type=int, default=4, help="request threads (a served worker has 4)")
    parser.add_argument("--every", type=int, default=1000, help="requests between checkpoints")
    parser.add_argument("--mix", type=parse_mix, default=MIX, help="route weights (default the soak's 30/30/30/10)")
    parser.add_argument("--cycle-every", type=int, default=0, help="run the sleep cycle after every N requests")
    parser.add_argument("--tracemalloc", action="store_true", help="trace Python's allocations (~2x the CPU)")
    parser.add_argument("--frames", type=int, default=1, help="tracemalloc frames kept per allocation")
    parser.add_argument("--top", type=int, default=25, help="lines of the tracemalloc diff shown")
    parser.add_argument("--types", type=int, default=8, help="object types shown per checkpoint (by growth)")
    parser.add_argument("--home", help="start from a copy of the folder a `bench.serve_cpu --keep` run printed")
    parser.add_argument("--json", type=Path, help="also write the checkpoints and the diff here")
    args = parser.parse_args(argv)
    from bench.request_cpu import setup  # Django is set up there, after the environment above

    home, stored, fresh = setup(args.memories, args.home)
    print(f"MALLOC_ARENA_MAX={os.environ.get('MALLOC_ARENA_MAX')}; {args.memories} memories; {args.threads} threads; "
          f"mix {dict(args.mix)}; load {os.getloadavg()[0]:.2f}", flush=True)
    try:
        result = run(args, home, stored, fresh)
    finally:
        shutil.rmtree(home.parent, ignore_errors=True)
    rows = result["rows"]
    if len(rows) > 2:
        half = rows[len(rows) // 2:]
        per_k = [(b["rss_kib"] - a["rss_kib"]) / ((b["requests"] - a["requests"]) / 1000)
                 for a, b in zip(half, half[1:])]
        print(f"second half: RSS {statistics.mean(per_k) / 1024:+.2f} MiB per 1,000 requests (mean of steps)")
    for name, title in (("grown", "from the first checkpoint"), ("grown_second_half", "over the second half")):
        if name in result:
            print(f"tracemalloc, the lines whose held bytes grew most {title}:")
            for line in result[name]:
                print(f"{line[1]:>8} KiB {line[2]:>+8} blocks  {line[0]}")
    print(f"errors: {len(result['errors'])} {result['errors'][:3]}; sleep cycles run: {result['cycles']} "
          f"(exit codes {result['cycle_codes']})")
    if args.json:
        for row in result["rows"]:
            row["types"] = dict(row["types"].most_common(60))
        args.json.write_text(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
