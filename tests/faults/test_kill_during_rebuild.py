"""A full rebuild is one atomic swap (memory/rebuild.py): readers see the old index until the new one is complete,
and a rebuild SIGKILLed at any moment leaves the old index exactly as it was (issue 12 defect 5).

Before, a rebuild committed its wipe and then each chunk of 500 files separately: a reader saw 0, 500, 1000 ...
rows, health said nodes=0 and recall answered empty, and a kill left a partial index until the next sweep.

The files are indexed with the hash embedder: this is plumbing (rows, edges, FTS, vectors), not semantics.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.faults.mounts import fast_folder
from tests.faults.support import MANAGE, ROOT, SEED, child_env, copy_home, index_count, kill, verify
from tests.support import pg_databases

pytestmark = [pytest.mark.faults, pytest.mark.slow]

FILES = 2000
EMBEDDER = {"ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
ROWS = "SELECT count(*) FROM memory_noderow"
EDGES = "SELECT count(*) FROM memory_edgerow"
VECTORS = ("SELECT count(*) FROM node_vec" if pg_databases.ON_POSTGRES
           else "SELECT count(*) FROM node_vec_rowids")  # vec0's shadow table: no extension needed
SEED_SCRIPT = str(Path(__file__).resolve().parent / "seed_files.py")

# Health (argv[1] == "health", slow: it compares every file with the index) or recall in a loop, one JSON line
# per call, until stdin closes.
READER = textwrap.dedent("""
    import json, sys, threading
    import django
    django.setup()
    from memory import runtime
    from memory.domain.search import SearchQuery
    from memory.search import recall
    from memory.selectors import health_report
    done = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), done.set()), daemon=True).start()
    store = runtime.store()
    while not done.is_set():
        if sys.argv[1] == "health":
            print(json.dumps({"nodes": health_report(store=store)["counts"]["nodes"]}), flush=True)
        else:
            hits = recall(query=SearchQuery(query="seeded memory about item 42", limit=10, activation=False))
            print(json.dumps({"hits": [h.node_id for h in hits]}), flush=True)
""")


@pytest.fixture
def rebuild_home(template_home, tmp_path):
    with fast_folder(tmp_path / "fast") as folder:
        home = copy_home(template_home, folder / "home")
        seeded = subprocess.run([sys.executable, SEED_SCRIPT, str(FILES)], env=child_env(home, **EMBEDDER),
                                capture_output=True, text=True, timeout=600)
        assert "SEEDED" in seeded.stdout, seeded.stderr[-2000:]
        assert index_count(home, ROWS) == FILES + 1  # and the self node
        yield home


def _rebuild(home: Path) -> subprocess.Popen:
    # stderr goes to a file: a pipe nobody reads (the killed rebuilds) blocks a child that logs more than 64 KiB.
    log = (home / "rebuild-stderr.log").open("ab")
    try:
        return subprocess.Popen([sys.executable, MANAGE, "rebuild", "--json", "--verify"],
                                env=child_env(home, **EMBEDDER),
                                stdout=subprocess.DEVNULL, stderr=log)
    finally:
        log.close()


def _stderr(home: Path) -> str:
    return (home / "rebuild-stderr.log").read_text(errors="replace")[-2000:]


def test_readers_see_the_whole_old_index_during_a_rebuild(rebuild_home):
    home = rebuild_home
    with (home / "readers-stderr.log").open("ab") as log:
        readers = {mode: subprocess.Popen([sys.executable, "-c", READER, mode], cwd=ROOT,
                                          env=child_env(home, **EMBEDDER), stdin=subprocess.PIPE,
                                          stdout=subprocess.PIPE, stderr=log, text=True)
                   for mode in ("health", "recall")}
    seen: dict[str, list[dict]] = {}
    try:
        warm = {mode: json.loads(reader.stdout.readline()) for mode, reader in readers.items()}
        # warm: every call from here on overlaps the rebuild
        rebuild = _rebuild(home)
        rebuild.wait(timeout=600)
        assert rebuild.returncode == 0, _stderr(home)
    finally:
        for mode, reader in readers.items():
            reader.stdin.close()
            seen[mode] = [json.loads(line) for line in reader.stdout.read().splitlines()]
            reader.wait(timeout=60)
    # At least one call of each kind overlapped the rebuild (how many depends on the machine's load: a fast
    # rebuild on a busy machine leaves room for one slow health call).
    assert len(seen["health"]) >= 1 and len(seen["recall"]) >= 2, {m: len(s) for m, s in seen.items()}
    assert {s["nodes"] for s in seen["health"]} == {FILES + 1}
    assert warm["recall"]["hits"], "the warm-up recall found nothing: the query does not test the index"
    assert all(s["hits"] == warm["recall"]["hits"] for s in seen["recall"])  # the same hits, in the same order
    assert index_count(home, ROWS) == FILES + 1 and index_count(home, VECTORS) == FILES + 1


def test_a_killed_rebuild_leaves_the_old_index_intact(rebuild_home):
    home = rebuild_home
    started = time.monotonic()
    whole = _rebuild(home)
    whole.wait(timeout=600)
    assert whole.returncode == 0, _stderr(home)
    duration = time.monotonic() - started
    rng = random.Random(SEED + 20)
    for delay in sorted(rng.uniform(0.2, duration) for _ in range(3)):
        proc = _rebuild(home)
        time.sleep(delay)
        kill(proc.pid)
        proc.wait(timeout=10)
        assert (index_count(home, ROWS), index_count(home, EDGES), index_count(home, VECTORS)) == \
            (FILES + 1, FILES - 1, FILES + 1), delay
    report = verify(home, **EMBEDDER)
    assert report["unparsable"] == []
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert report["healed"] == report["rebuilt"]
    assert len(report["healed"]["nodes"]) == FILES + 1
