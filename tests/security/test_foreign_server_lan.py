"""A client whose server URL names one of this machine's own non-loopback addresses (its LAN address, as
ORMAH_HOST=192.168.1.20 for a server other machines reach) connects to whatever listens on the wildcard address at
that port: another user's process there is refused as it is at loopback (session 24, review13; session 23 left it:
whisper.hook.foreign_server checked loopback and wildcard names only, so the CLI sent the token to a squatter of
uid 65534 on 0.0.0.0). An address that is not this machine's is not checked (a team server elsewhere)."""

from __future__ import annotations

import socket

import pytest

from tests.security.recorder import NOBODY, assert_the_cli_refuses, squatting
from tests.security.recorder import recorded as _recorded
from whisper.hook import foreign_server

NOT_OURS = "192.0.2.254"  # TEST-NET-1 (RFC 5737), this machine's only when its LAN is that net


def own_address() -> str | None:
    """One of this machine's non-loopback IPv4 addresses (the one a datagram to a public address would leave from;
    connecting a UDP socket sends nothing), or None."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("198.51.100.1", 9))
            address = probe.getsockname()[0]
    except OSError:
        return None
    return None if address.startswith("127.") or address == "0.0.0.0" else address


@pytest.fixture
def lan_squatter():
    """A real HTTP server of user 65534 on 0.0.0.0 that records what it is sent, and this machine's LAN address."""
    address = own_address()
    if address is None:
        pytest.skip("this machine has no non-loopback IPv4 address")
    with squatting("0.0.0.0") as (proc, port):
        yield proc, port, address


def test_the_cli_refuses_a_squatter_reached_through_this_machines_lan_address(lan_squatter, monkeypatch):
    proc, port, address = lan_squatter
    assert_the_cli_refuses(proc, monkeypatch, ORMAH_URL=f"http://{address}:{port}")


def test_only_this_machines_addresses_are_checked(lan_squatter):
    proc, port, address = lan_squatter
    try:
        assert f"uid {NOBODY}" in (foreign_server(f"http://{address}:{port}/api") or "")
        assert foreign_server(f"http://{address}:{port}/api", uid=NOBODY) is None  # that user's own server
        if own_address() != NOT_OURS:
            assert foreign_server(f"http://{NOT_OURS}:{port}/api") is None
    finally:
        _recorded(proc)
