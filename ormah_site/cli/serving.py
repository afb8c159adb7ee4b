"""`ormah serve` checks its address before it starts anything: a busy port, or a port another `ormah serve` of this
user holds, is a clear error, not a dying child or a shared port."""

from __future__ import annotations

import fcntl
import os
import socket
import tempfile
from pathlib import Path


def port_problem(host: str | None, port: int | None) -> str | None:
    """Why `ormah serve` cannot bind host:port (defaults: ORMAH_HOST, ORMAH_PORT), or None when it can."""
    host = host or os.environ.get("ORMAH_HOST") or "127.0.0.1"
    try:
        port = port if port is not None else int(os.environ.get("ORMAH_PORT") or 8787)
    except ValueError:
        return f"ORMAH_PORT must be a number, not {os.environ.get('ORMAH_PORT')!r}"
    if not 0 < port < 65536:
        return f"the port must be between 1 and 65535, not {port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"cannot serve on {host}: {exc.strerror}"
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # what gunicorn sets: TIME_WAIT is no problem
        try:
            probe.bind(address)
        except OSError as exc:
            return (f"cannot serve on {host}:{port}: {exc.strerror.lower()} (is Ormah or another program already "
                    f"running there? stop it, or choose another port with --port or ORMAH_PORT)")
    return None


class PortUnavailable(Exception):
    """The port's lock cannot be taken: another `ormah serve` of this user holds it, or its folder is unusable."""


def lock_port(port: int) -> int:
    """Take this user's lock of `port` for the life of the calling process and of the program it execs (the
    serve supervisor); return its file descriptor. Raises PortUnavailable when another `ormah serve` holds it
    (or the lock's folder cannot be used).

    With more than one web worker the web master listens with SO_REUSEPORT (a socket per worker), and Linux lets
    any process of the same user join such a port: a second server would silently take a share of the connections
    instead of failing to bind. The lock makes it fail clearly, before it starts anything. A non-blocking `flock` on a file per port in a folder only this user can write; the
    kernel drops it when the holder dies, so it never goes stale.
    """
    folder = Path(tempfile.gettempdir()) / f"ormah-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        if folder.is_symlink() or folder.stat().st_uid != os.getuid():
            raise PortUnavailable(f"cannot lock port {port}: {folder} belongs to another user")
        fd = os.open(folder / f"serve-{port}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise PortUnavailable(f"cannot lock port {port} in {folder}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip() or "?"
        os.close(fd)
        raise PortUnavailable(f"cannot serve on port {port}: another `ormah serve` (pid {holder}) is running "
                              f"there; stop it, or choose another port with --port or ORMAH_PORT") from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    os.set_inheritable(fd, True)
    return fd
