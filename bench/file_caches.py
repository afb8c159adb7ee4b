"""What memory/store.py's per-file caches hold after a process read every memory file, and what reading costs.

    python -m bench.file_caches [--files 10000,100000]

For each size a temporary memory folder gets that many node files (rendered by the real markdown renderer, written
without fsync: only their reading is measured). Then, as the watcher's catch-up sync does in a web worker, the store
scans every file (`MarkdownStore.scan`: each file read and parsed, the caches filled), and `--lookups` ids spread over
the folder are looked up at their files (`path_for`, what a write or a forget asks first), twice. Printed: the caches' entries,
the bytes Python holds more after the scan than before it (tracemalloc, the caches' entries being what stays), the
process's RSS before and after, and the CPU of the scan and of each round of lookups. Run it in a checkout before
and after a change to the caches (from that checkout's root: copy this file in). A benchmark, not a test: nothing
asserts.
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
import tempfile
import time
import tracemalloc
import uuid
from datetime import UTC, datetime
from pathlib import Path

from memory import store
from memory.domain.enums import NodeType
from memory.domain.markdown import render
from memory.domain.node import Node
from memory.domain.slug import node_filename

WHEN = datetime(2026, 11, 30, 6, 0, tzinfo=UTC)


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def write_files(folder: Path, count: int) -> list[str]:
    nodes = folder / store.NODES_DIR
    nodes.mkdir(parents=True)
    ids = []
    for n in range(count):
        node = Node(id=str(uuid.UUID(int=(n + 1) * 7919 + (n << 96))), type=NodeType.FACT, tier="working",
                    title=f"Memory number {n}", content=f"The bench's memory number {n}, about nothing in particular.",
                    created=WHEN, updated=WHEN, last_accessed=WHEN)
        (nodes / node_filename(node)).write_text(render(node), encoding="utf-8")
        ids.append(node.id)
    return ids


def measure(count: int, lookups: int) -> dict:
    root = Path(tempfile.mkdtemp(prefix="ormah-file-caches-"))
    try:
        ids = write_files(root / "memory", count)
        for cache in (store._ID_CACHE, store._LAST_PATH, store._MALFORMED):
            cache.clear()
        folder = store.MarkdownStore(root / "memory")
        gc.collect()
        rss_before = rss_mib()
        tracemalloc.start()
        held_before = tracemalloc.get_traced_memory()[0]
        started = time.process_time()
        scanned = sum(1 for _ in folder.scan())
        scan_s = time.process_time() - started
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - held_before
        tracemalloc.stop()
        rss_after = rss_mib()
        rounds = []
        asked = ids[::max(1, count // lookups)]
        for _ in range(2):
            started = time.process_time()
            found = sum(1 for node_id in asked if folder.path_for(node_id) is not None)
            rounds.append(((time.process_time() - started) / len(asked), found))
        return {"files": count, "scanned": scanned, "ids": len(store._ID_CACHE), "paths": len(store._LAST_PATH),
                "held_mib": held / 2**20, "rss": (rss_before, rss_after), "scan_ms": 1000 * scan_s / count,
                "lookups": [(1000 * s, found) for s, found in rounds]}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="10000,100000", help="comma-separated sizes")
    parser.add_argument("--lookups", type=int, default=100, help="ids looked up after the scan (each round)")
    args = parser.parse_args(argv)
    print(f"{store.__file__}; load average {os.getloadavg()[0]:.2f}")
    print("| files | ids / paths cached | held after the scan (tracemalloc) | RSS before -> after | scan CPU ms a file "
          "| path_for CPU ms an id, 1st / 2nd round |")
    print("|---:|---|---:|---|---:|---|")
    for count in (int(n) for n in args.files.split(",")):
        r = measure(count, args.lookups)
        (first, f1), (second, f2) = r["lookups"]
        print(f"| {r['files']:,} | {r['ids']:,} / {r['paths']:,} | {r['held_mib']:.1f} MiB | {r['rss'][0]:.0f} -> "
              f"{r['rss'][1]:.0f} MiB | {r['scan_ms']:.3f} | {first:.3f} / {second:.3f} ({f1:,}, {f2:,} found) |")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
