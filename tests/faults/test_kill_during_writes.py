"""SIGKILL of the web worker, then of the serve supervisor, at seeded random points of a stream of HTTP writes
(SIGKILL of the whole server at once ends tests/faults/test_kill_during_jobs.py).

Afterwards every file parses, `ormah doctor --heal` leaves an index holding every acknowledged write (and equal
to a fresh rebuild), and `ormah doctor --json` reports ok. Seed: ORMAH_FAULT_SEED.
"""

from __future__ import annotations

import random

import pytest

from tests.faults.support import SEED, WriteStream, kill, missing_acks, verify, wait_until

pytestmark = [pytest.mark.faults, pytest.mark.slow]


def test_sigkill_of_web_worker_and_supervisor_loses_no_acknowledged_write(fault_home, serve):
    rng = random.Random(SEED)
    server = serve(fault_home)
    stream = WriteStream(server.port, server.token, seed=SEED, threads=3).start()

    # 1. The gunicorn worker dies mid-write; the gunicorn master starts another and writes resume.
    assert stream.wait_acks(rng.randint(8, 20)), stream.ledger.statuses
    worker = server.web_workers()[0]
    kill(worker)
    acks_at_kill = stream.acks
    assert wait_until(lambda: server.web_workers() not in ([], [worker]), 15), "no new web worker"
    assert stream.wait_acks(acks_at_kill + rng.randint(5, 15)), "writes did not resume after the worker died"

    # 2. The supervisor dies mid-write: its children must not outlive it (they would hold the port).
    supervisor_children = [server.web_master(), server.cluster()]
    kill(server.proc.pid)
    ledger_until_kill = stream.acks
    stopped = wait_until(lambda: not any(p in server.tree() for p in supervisor_children), 60, 0.2)
    ledger = stream.finish()
    orphans = server.tree()
    server.kill_all()

    assert stopped, f"children of the killed supervisor still run: {orphans}"
    assert ledger_until_kill >= 13
    report = verify(fault_home)
    assert report["unparsable"] == []
    assert report["doctor_heal"]["ok"], report["doctor_heal"]
    assert missing_acks(ledger, report) == []
    assert report["healed"] == report["rebuilt"]
    assert report["doctor_after"]["ok"], report["doctor_after"]

