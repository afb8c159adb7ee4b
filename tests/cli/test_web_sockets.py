"""Claims: with more than one preloaded worker the web master listens on one socket that every worker accepts from
(ORMAH_WEB_SOCKETS=shared) or on a socket per worker, each with SO_REUSEPORT (per-worker); gunicorn binds its one
socket itself in the first case (ormah_site.gunicorn_conf.on_starting). Any other value is refused: by the system
check ormah.E007 before `ormah serve` starts anything, and by the gunicorn master itself when it is started another
way (it never falls back to a layout)."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace

import pytest
from gunicorn.config import Config

from ormah_site import gunicorn_conf
from ormah_site.checks import check_web_sockets
from tests.support.served import serve_stopped


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


@pytest.mark.parametrize(("sockets", "ids"), [("per-worker", []), ("shared", []), ("both", ["ormah.E007"]),
                                              ("", ["ormah.E007"]), ("Shared", ["ormah.E007"])])
def test_the_socket_layout_must_be_shared_or_per_worker(settings, sockets, ids):
    settings.ORMAH = {**settings.ORMAH, "WEB_SOCKETS": sockets}
    assert [error.id for error in check_web_sockets()] == ids


@pytest.mark.parametrize("workers", [2, 3])
def test_a_master_started_another_way_refuses_an_unknown_layout_instead_of_sharing_one_socket(settings, workers):
    settings.ORMAH = {**settings.ORMAH, "WEB_SOCKETS": "both"}
    server = master(workers)
    with pytest.raises(RuntimeError, match="ORMAH_WEB_SOCKETS must be one of shared, per-worker, not 'both'"):
        gunicorn_conf.on_starting(server)
    assert server.LISTENERS == []


def test_serve_with_an_unknown_socket_layout_stops_at_its_checks_with_a_clear_error(tmp_path):
    out = serve_stopped(tmp_path, ORMAH_WEB_SOCKETS="both")
    assert out.returncode != 0
    assert "(ormah.E007) ORMAH_WEB_SOCKETS is 'both'" in out.stderr and "Traceback" not in out.stderr, out.stderr
    assert "Ormah is serving" not in out.stdout
