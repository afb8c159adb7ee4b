"""A client whose server URL names this machine by a host name (its own name, `http://mylaptop:8787`, which
/etc/hosts maps to a loopback or LAN address) reaches whatever listens there: another user's process is refused as
it is at an address literal (session 25, review14; sessions 23 and 24 checked localhost and address literals only,
and the CLI sent the token to a squatter reached by the machine's name). A name that does not resolve, or resolves
elsewhere, is not checked (the connection resolves it the same way)."""

from __future__ import annotations

import socket
import threading

import anyio
import pytest

from tests.security.recorder import NOBODY, assert_the_cli_refuses, squatting
from tests.security.recorder import recorded as _recorded
from whisper.hook import foreign_server


def own_name() -> str | None:
    """This machine's name when it resolves to a loopback address (Debian's and Docker's /etc/hosts), else None."""
    name = socket.gethostname()
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, None, socket.AF_INET, socket.SOCK_STREAM)}
    except OSError:
        return None
    return name if name != "localhost" and found and all(a.startswith("127.") for a in found) else None


@pytest.fixture
def named_squatter():
    """A real HTTP server of user 65534 on 127.0.0.1 that records what it is sent, and this machine's name."""
    name = own_name()
    if name is None:
        pytest.skip("this machine's name does not resolve to a loopback address")
    with squatting("127.0.0.1") as (proc, port):
        yield proc, port, name


def test_the_cli_refuses_a_squatter_reached_through_this_machines_name(named_squatter, monkeypatch):
    proc, port, name = named_squatter
    assert_the_cli_refuses(proc, monkeypatch, ORMAH_URL=f"http://{name}:{port}")


def test_a_name_is_checked_where_it_resolves(named_squatter):
    proc, port, name = named_squatter
    try:
        assert f"uid {NOBODY}" in (foreign_server(f"http://{name}:{port}/api") or "")
        assert f"uid {NOBODY}" in (foreign_server(f"http://{name.upper()}:{port}/api") or "")
        assert foreign_server(f"http://{name}:{port}/api", uid=NOBODY) is None  # that user's own server
        assert foreign_server(f"http://no-such-host.invalid:{port}/api") is None  # RFC 6761: never resolves
    finally:
        _recorded(proc)


@pytest.mark.parametrize("url", ["http://:8787/", "http://\udcff.example:8787/", "http://a..b:8787/",
                                 "http://" + "a" * 300 + ":8787/"])
def test_a_host_name_that_cannot_be_resolved_is_not_an_error(url):
    assert foreign_server(url) is None


def test_the_mcp_server_resolves_no_name_on_its_event_loop(monkeypatch):
    """The check runs in a worker thread (a lookup may take seconds; on the loop it stalled every call meanwhile);
    httpx resolves off the loop too. The resolver is real; only who calls it is recorded."""
    from mcp.server.fastmcp.exceptions import ToolError

    from ormah_site.mcp_server import OrmahApi

    real, callers = socket.getaddrinfo, []

    def recorded_getaddrinfo(*args, **kwargs):
        callers.append(threading.current_thread())
        return real(*args, **kwargs)

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setattr(socket, "getaddrinfo", recorded_getaddrinfo)
    api = OrmahApi(base_url=f"http://{socket.gethostname()}:{port}", token=lambda: "t")
    loop_thread = []

    async def call():
        loop_thread.append(threading.current_thread())
        await api.call("POST", "/recall", body={"query": "passwords"})

    with pytest.raises(ToolError):
        anyio.run(call)
    assert callers and loop_thread[0] not in callers
