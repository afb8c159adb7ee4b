"""Loaded by every Python process of a sandboxed test run (PYTHONPATH): a connection or a name lookup that leaves
the machine is refused and written to $ORMAH_NET_LOG. Loopback and Unix sockets pass.

Python-level only (socket.socket and socket.getaddrinfo); native code is watched by strace where it exists
(tests/security/test_no_telemetry.py).
"""

import ipaddress
import os
import socket

_LOG = os.environ.get("ORMAH_NET_LOG")
_LOCAL_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost", ""}


def _local(host) -> bool:
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host).strip("[]").split("%")[0]
    if host.lower() in _LOCAL_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _refuse(what: str) -> None:
    if _LOG:
        with open(_LOG, "a") as fh:
            fh.write(f"{os.getpid()} {what}\n")
    raise OSError(101, f"network blocked by the Ormah test sandbox: {what}")


_connect, _connect_ex, _sendto = socket.socket.connect, socket.socket.connect_ex, socket.socket.sendto
_getaddrinfo = socket.getaddrinfo


def connect(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        _refuse(f"connect {address!r}")
    return _connect(self, address)


def connect_ex(self, address):
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        _refuse(f"connect_ex {address!r}")
    return _connect_ex(self, address)


def sendto(self, data, *args):
    address = args[-1]
    if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
        _refuse(f"sendto {address!r}")
    return _sendto(self, data, *args)


def getaddrinfo(host, *args, **kwargs):
    if host is not None and not _local(host):
        _refuse(f"getaddrinfo {host!r}")
    return _getaddrinfo(host, *args, **kwargs)


socket.socket.connect = connect
socket.socket.connect_ex = connect_ex
socket.socket.sendto = sendto
socket.getaddrinfo = getaddrinfo
