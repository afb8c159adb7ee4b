"""A client whose server URL names the wildcard address (ORMAH_HOST=0.0.0.0 or ::, the bind address of a server
reachable from the network, which the clients then also connect to) reaches this machine's own ports, loopback
included; it too sends nothing to another user's process listening there (session 23, review12: whisper.hook.
foreign_server checked loopback names only, so http://0.0.0.0:PORT sent the token to a squatter of uid 65534)."""

from __future__ import annotations

import os

import pytest

from tests.security.recorder import NOBODY, assert_the_cli_refuses
from tests.security.recorder import recorded as _recorded
from tests.security.recorder import start as _start_squatter
from tests.security.test_foreign_server import squatter  # noqa: F401 (squatter is a fixture)
from whisper.hook import foreign_server


def test_the_cli_refuses_a_squatter_reached_through_the_wildcard_address(squatter, monkeypatch):  # noqa: F811
    proc, port = squatter
    assert_the_cli_refuses(proc, monkeypatch, ORMAH_HOST="0.0.0.0", ORMAH_PORT=str(port))


@pytest.mark.parametrize("listen, url_host", [("127.0.0.1", "0.0.0.0"), ("0.0.0.0", "0.0.0.0"), ("::1", "[::]"),
                                              ("::", "[::]")])
def test_the_wildcard_address_is_checked_as_loopback_is(listen, url_host):
    if os.geteuid() != 0:
        pytest.skip("starting a process of another user needs root")
    try:
        proc, port = _start_squatter(listen, as_nobody=True)
    except (OSError, ValueError):
        pytest.skip(f"cannot listen on {listen} here")
    try:
        assert f"uid {NOBODY}" in (foreign_server(f"http://{url_host}:{port}/api") or "")
        assert foreign_server(f"http://{url_host}:{port}/api", uid=NOBODY) is None  # that user's own server
    finally:
        _recorded(proc)
