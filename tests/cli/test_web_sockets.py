"""Claims: with more than one preloaded worker the web master listens on one socket that every worker accepts from
(ORMAH_WEB_SOCKETS=shared) or on a socket per worker, each with SO_REUSEPORT (per-worker); gunicorn binds its one
socket itself in the first case (ormah_site.gunicorn_conf.on_starting)."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from ormah_site import gunicorn_conf


def master(workers: int, preload: bool = True) -> SimpleNamespace:
    cfg = Config()
    cfg.set("bind", ["127.0.0.1:0"])
    cfg.set("preload_app", preload)
    return SimpleNamespace(cfg=cfg, num_workers=workers, LISTENERS=[], log=logging.getLogger("test"))


@pytest.mark.parametrize(("sockets", "workers", "preload", "listeners"), [
    ("per-worker", 2, True, 2),
    ("per-worker", 3, True, 3),
    ("per-worker", 1, False, 0),
    ("shared", 2, True, 0),  # gunicorn binds its one socket after this hook
    ("shared", 4, True, 0),
])
def test_the_master_listens_per_worker_only_when_told(settings, sockets, workers, preload, listeners):
    settings.ORMAH = {**settings.ORMAH, "WEB_SOCKETS": sockets}
    server = master(workers, preload)
    gunicorn_conf.on_starting(server)
    try:
        assert len(server.LISTENERS) == listeners
        for listener in server.LISTENERS:
            assert listener.sock.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT) == 1
    finally:
        for listener in server.LISTENERS:
            listener.close()
