"""The web worker freezes its warmed heap (ormah_site.gunicorn_conf): once, after its first WARM_REQUESTS requests,
at the first moment no request is in flight, so a full collection no longer walks the views, the model and the
caches the worker built (docs/benchmarks.md, "Served tails and memory, session 27"). Failed on main c4c3dec: a
worker froze nothing (with one worker, nothing in the tree did)."""

from __future__ import annotations

import gc
import re
import threading
import urllib.request

import pytest

from ormah_site import gunicorn_conf
from tests.faults.support import Served, manage, wait_until
from tests.support import pg_databases

FROZE = re.compile(r"Web worker \d+ froze its warmed heap: (\d+) objects")


@pytest.fixture
def fresh_worker(monkeypatch):
    """A worker that has served nothing and froze nothing; the test process's collector is given back after."""
    monkeypatch.setattr(gunicorn_conf, "_in_flight", 0)
    monkeypatch.setattr(gunicorn_conf, "_went_idle", threading.Event())
    monkeypatch.setattr(gunicorn_conf, "_served", 0, raising=False)  # raising=False: the old code had none
    monkeypatch.setattr(gunicorn_conf, "_frozen", False, raising=False)
    gc.unfreeze()
    yield
    gc.unfreeze()


def get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=30) as response:  # a connection per request, as the CLI makes them
        response.read()
        return response.status


def serve(count: int) -> None:
    for _ in range(count):
        gunicorn_conf.pre_request(None, None)
        gunicorn_conf.post_request(None, None, {}, None)


def test_the_heap_is_frozen_after_the_warm_up_requests_and_not_before(fresh_worker):
    serve(gunicorn_conf.WARM_REQUESTS - 1)
    before = gc.get_freeze_count()
    serve(1)
    assert (before, gc.get_freeze_count() > 0) == (0, True)


def test_the_freeze_waits_for_the_requests_in_flight(fresh_worker):
    gunicorn_conf.pre_request(None, None)  # a request in flight all along
    serve(gunicorn_conf.WARM_REQUESTS)
    waiting = gc.get_freeze_count()
    gunicorn_conf.post_request(None, None, {}, None)
    assert (waiting, gc.get_freeze_count() > 0) == (0, True)


def test_a_worker_never_idle_freezes_at_eight_times_the_warm_up(fresh_worker):
    gunicorn_conf.pre_request(None, None)
    serve(8 * gunicorn_conf.WARM_REQUESTS - 1)
    waiting = gc.get_freeze_count()
    serve(1)
    assert (waiting, gc.get_freeze_count() > 0) == (0, True)


def test_the_heap_is_frozen_once(fresh_worker):
    serve(gunicorn_conf.WARM_REQUESTS)
    gc.unfreeze()
    serve(10 * gunicorn_conf.WARM_REQUESTS)
    assert gc.get_freeze_count() == 0


@pytest.mark.slow
def test_a_served_worker_says_it_froze_its_heap(tmp_path):
    """`ormah serve` with one web worker (which preloads nothing): after WARM_REQUESTS requests its log says how many
    objects it froze."""
    home = tmp_path / "home"
    done = manage(home, "init", "--name", "Robin", "--quiet")
    assert done.returncode == 0, done.stderr
    server = Served(home, extra_env={"ORMAH_WEB_WORKERS": "1", "ORMAH_WEB_THREADS": "2", "ORMAH_WATCH": "0",
                                     "ORMAH_LOG_LEVEL": "INFO"})
    try:
        server.wait_ready(timeout=180)
        statuses = {get(server.url("/login/")) for _ in range(gunicorn_conf.WARM_REQUESTS)}
        log = home / "logs" / "ormah.log"
        assert wait_until(lambda: log.exists() and FROZE.search(log.read_text()), 60), server.log_path.read_text()[-2000:]
        [count] = FROZE.findall(log.read_text())
        assert (statuses, int(count) > 0) == ({200}, True)
    finally:
        server.kill_all()
        pg_databases.drop_created()
