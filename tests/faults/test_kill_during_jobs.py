"""SIGKILL in the middle of merges: the sleep cycle run by the web worker (POST /api/admin/tasks/run-all) and by
the job cluster (queued from the jobs screen), then of the web worker during POST /api/admin/rebuild, and at last
of the whole server, all while HTTP writes stream in.

Afterwards every file parses, every acknowledged write is live (or was merged into a live memory, its tombstone
kept for undo), `ormah doctor --heal` leaves an index equal to a fresh rebuild, and `ormah doctor --json` is ok.
"""

from __future__ import annotations

import random
import threading
import time

import pytest

from tests.faults.support import (
    SEED,
    Api,
    WriteStream,
    index_count,
    kill,
    missing_acks,
    ui_client,
    verify,
    wait_until,
)

pytestmark = [pytest.mark.faults, pytest.mark.slow]

SERVICES = ["billing", "search", "auth", "mailer", "scheduler", "gateway", "ledger", "uploads", "reports",
            "metrics", "notifier", "archiver", "exporter", "importer", "renderer", "indexer"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
MERGES = "SELECT count(*) FROM memory_mergehistoryrow"


def clear_duplicates() -> list[dict]:
    """Pairs the duplicate merger merges without an LLM: the second adds no word the first lacks."""
    nodes = []
    for i, svc in enumerate(SERVICES):
        text = f"The {svc} service deploys every {DAYS[i % 5]} after the release captain signs off"
        nodes.append({"content": f"{text} on the checklist", "title": f"{svc} deploys on {DAYS[i % 5]}"})
        nodes.append({"content": text, "title": f"{svc} deploys on {DAYS[i % 5]}"})
    return nodes


def in_background(fn, *args, **kwargs) -> threading.Thread:
    def run():
        try:
            fn(*args, **kwargs)
        except OSError:
            pass  # the connection dies with the worker: that is the point

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def test_sigkill_during_merges_run_all_and_rebuild_loses_nothing(fault_home, serve):
    rng = random.Random(SEED + 10)
    server = serve(fault_home)
    api = Api(server.port, server.token)
    status, body = api.call("POST", "/api/agent/remember/batch", {"nodes": clear_duplicates()}, timeout=60)
    assert status == 201, body
    seeded = {r["node"]["id"]: {r["node"]["content"]} for r in body["results"]}
    stream = WriteStream(server.port, server.token, seed=SEED + 10, threads=2).start()
    home = server.home

    # 1. The web worker dies during the sleep cycle, after a seeded number of merges.
    after = rng.randint(1, 5)
    in_background(api.call, "POST", "/api/admin/tasks/run-all", timeout=120)
    assert wait_until(lambda: index_count(home, MERGES) >= after, 120, 0.01), "no merge started"
    worker = server.web_workers()[0]
    kill(worker)
    merged_by_web = index_count(home, MERGES)
    assert wait_until(lambda: server.web_workers() not in ([], [worker]), 120)

    # 2. The job cluster's worker dies during the sleep cycle queued from the jobs screen.
    assert wait_until(lambda: server.web_workers() and stream.acks > 0, 120)
    ui = ui_client(server)
    assert ui.post("/jobs/sleep-cycle/").status_code == 302
    after = merged_by_web + rng.randint(1, 4)
    assert wait_until(lambda: index_count(home, MERGES) >= after, 120, 0.01), "the cluster merged nothing"
    kill(wait_until(server.job_worker, 120))  # the one running the sleep cycle (named after its fork)
    merged_by_cluster = index_count(home, MERGES) - merged_by_web

    # 3. The web worker dies during a full rebuild, at a seeded moment after it started. The rebuild is atomic
    #    (memory/rebuild.py): it no longer wipes the index first, so there is no visible wipe to wait for.
    in_background(api.call, "POST", "/api/admin/rebuild", timeout=120)
    time.sleep(rng.uniform(0.2, 1.5))
    kill(server.web_workers()[0])

    # 4. Everything dies at once, mid-write.
    assert wait_until(lambda: server.web_workers(), 120)
    acks = stream.acks
    assert stream.wait_acks(acks + rng.randint(1, 6), 120)
    server.kill_all()
    ledger = stream.finish()
    ledger.allowed.update(seeded)

    assert (merged_by_web >= 1, merged_by_cluster >= 1) == (True, True)
    report = verify(home)
    assert report["unparsable"] == []
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert missing_acks(ledger, report) == []
    assert report["healed"] == report["rebuilt"]
    assert report["doctor_after"]["ok"], report["doctor_after"]
