"""The hook's guard on the way to the server, standard library only (whisper.hook imports it; so do the CLI's thin
path, the MCP server and ormah_site.peer, which checks a connection's user the same way): who listens at a loopback
address's port and whose socket a loopback connection comes from (Linux's /proc/net/tcp and tcp6), and an opener
that never sends the server's requests through a proxy."""

from __future__ import annotations

import os
import socket
import sys
import urllib.parse
import urllib.request

_MAPPED = b"\0" * 10 + b"\xff\xff"  # ::ffff:a.b.c.d, an IPv4 address in IPv6's form
_ANY = (b"\0" * 16, _MAPPED + b"\0" * 4)


def _as_ipv6(raw: bytes) -> bytes:
    return _MAPPED + raw if len(raw) == 4 else raw


def _host_addresses(host: str, *, resolve: bool = True) -> set[bytes]:
    """This machine's addresses (16 bytes each) a URL's host name means; empty for any other host. The wildcard
    address (ORMAH_HOST=0.0.0.0 or ::, which the clients then connect to) reaches this machine's loopback too; an
    address of one of its interfaces (a LAN address, ORMAH_HOST=192.168.1.20) reaches a process listening on the
    wildcard address (session 24). Another host name is resolved as the connection will resolve it (getaddrinfo:
    /etc/hosts, then DNS), and each of its addresses that is this machine's counts (session 25: the machine's own
    name, `http://mylaptop:8787`, reached a squatter unchecked); a name that does not resolve means none."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return {_as_ipv6(bytes([127, 0, 0, 1])), b"\0" * 15 + b"\1"}
    if not host:
        return set()
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            raw = _as_ipv6(socket.inet_pton(family, host))
        except (OSError, UnicodeError):
            continue
        if raw in _ANY:
            return _host_addresses("localhost")
        loopback = raw == b"\0" * 15 + b"\1" or (raw.startswith(_MAPPED) and raw[12] == 127)
        return {raw} if loopback or _own_address(family, host) else set()
    if not resolve:
        return set()
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):  # no such name (the connection fails the same way), or not a valid one
        return set()
    return set().union(*(_host_addresses(str(sockaddr[0]).split("%")[0], resolve=False) for *_, sockaddr in found))


def _own_address(family: int, host: str) -> bool:
    """Whether `host` (an address literal) is one of this machine's: the kernel binds a socket only to those (with
    net.ipv4.ip_nonlocal_bind set it binds any, and a remote address is then checked too: at worst a refusal when
    another user listens on the wildcard address at the server's port)."""
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.bind((host, 0))
    except OSError:
        return False
    return True


def _tcp_sockets():
    """(state, local address, local port, remote address, remote port, uid) of every TCP socket of this network
    namespace, from Linux's /proc/net/tcp and tcp6 (addresses as 16 bytes; the files hold 32-bit words in the host's
    byte order); nothing where those files do not exist."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, encoding="ascii") as rows:
                next(rows, None)
                for row in rows:
                    fields = row.split()
                    if len(fields) < 8:
                        continue
                    ends = []
                    for end in (fields[1], fields[2]):
                        address, _, hex_port = end.partition(":")
                        raw = bytes.fromhex(address)
                        if sys.byteorder == "little":
                            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                        ends += [_as_ipv6(raw), int(hex_port, 16)]
                    yield (fields[3], *ends, int(fields[7]))
        except (OSError, ValueError):
            continue


def _listeners(port: int) -> list[tuple[bytes, int]]:
    """(address as 16 bytes, uid) of every socket listening on TCP `port` (0A: LISTEN)."""
    return [(address, uid) for state, address, at, _, _, uid in _tcp_sockets() if state == "0A" and at == port]


def _packed(address: str) -> bytes | None:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return _as_ipv6(socket.inet_pton(family, address.split("%")[0]))
        except OSError:
            continue
    return None


def connection_user(client: tuple, server: tuple) -> int | None:
    """The uid of the process whose socket at `client` (address, port) is connected to `server` (address, port) on
    this machine: the client's end of a loopback connection, as a server sees it (getpeername, getsockname). None
    when no such socket is on this machine (a remote client) or /proc/net/tcp does not exist (not Linux)."""
    peer, here = _packed(client[0]), _packed(server[0])
    if peer is None or here is None:
        return None
    for state, address, at, remote, remote_port, uid in _tcp_sockets():
        if state == "01" and at == client[1] and remote_port == server[1] and address == peer and remote == here:
            return uid  # 01: ESTABLISHED
    return None


def foreign_server(url: str, *, uid: int | None = None) -> str | None:
    """Why nothing may be sent to `url`, or None. On this machine's loopback any user can listen on a free port:
    while Ormah is not running, another user's process on its port would be sent the API token (the key to every
    memory) and every prompt. So when the server's address is this machine's (loopback, the wildcard, or one of its
    own addresses: _host_addresses), the process listening there must be this user's (`uid`, default the caller's)
    or root's (Docker's port forwarder); any other is refused before a byte is sent. Linux only (/proc/net/tcp);
    elsewhere nothing is checked. A process that binds the port in the instant between this check and the
    connection is not caught: a squatter that holds the port is."""
    parts = urllib.parse.urlsplit(url)
    addresses = _host_addresses(parts.hostname or "")
    if not addresses:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    mine = {os.getuid() if uid is None else uid, 0}
    strangers = sorted({owner for address, owner in _listeners(port)
                        if (address in addresses or address in _ANY) and owner not in mine})
    if not strangers:
        return None
    return (f"another user's process (uid {strangers[0]}) listens at {parts.hostname}:{port}, where this Ormah "
            "server should be: it is sent neither the API token nor any request. Stop it, or run `ormah serve` "
            "on another port (ORMAH_PORT, ORMAH_URL)")


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def urlopen_direct(request: urllib.request.Request, *, timeout: float):
    """urllib's urlopen without proxies: the server is on this machine, and urllib sends a loopback URL through the
    proxy of HTTP_PROXY / http_proxy unless no_proxy names it, which would hand the proxy the token and the prompt."""
    return _DIRECT.open(request, timeout=timeout)
