"""`ormah serve` checks its address before it starts anything: a busy port, or a port another `ormah serve` of this
user holds, is a clear error, not a dying child or a shared port."""

from __future__ import annotations

import errno
import fcntl
import os
import pwd
import socket
import struct
import sys
from pathlib import Path

from memory.errors import OrmahError


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


class PortUnavailable(OrmahError):
    """The port's lock cannot be taken: another `ormah serve` of this user holds it, or its folder is unusable."""

    code = "port_unavailable"
    http_status = 409


def lock_port(port: int) -> int:
    """Take this user's lock of `port` for the life of the calling process and of the program it execs (the
    serve supervisor); return its file descriptor. Raises PortUnavailable when another `ormah serve` of this user
    holds it (naming its pid), or when the lock's folder cannot be used.

    With more than one web worker on a socket each (ORMAH_WEB_SOCKETS=per-worker) the web master listens with
    SO_REUSEPORT, and Linux lets any process of the same user join such a port: a second server would silently take
    a share of the connections instead of failing to bind. The lock makes it fail clearly, before it starts
    anything, whatever the layout. The kernel drops it when
    its holder dies, so it never goes stale; it depends on no environment variable (TMPDIR, HOME) and on no folder
    another user can create first.

    On Linux it is an abstract Unix socket, `\\0ormah-serve-<uid>-<port>`, listening (it accepts nothing): one
    name per network namespace, seen by every process of it whatever its private /tmp. Any user may bind any
    abstract name, so a taken name is checked by connecting to it (SO_PEERCRED): a holder of this user is another
    server, refused with its pid; any other holder is a squatter, and the lock falls back to the file lock, which
    every server of this user then takes (none finds the name free while it is squatted). Elsewhere (macOS) it is a
    `flock` on a file per port in `<home>/.cache/ormah` (home from the password database, not from HOME).
    """
    if sys.platform.startswith("linux"):
        fd = _lock_abstract(port)
        if fd is not None:
            return fd
    return _lock_file(port)


def _lock_abstract(port: int) -> int | None:
    """The port's abstract socket, bound and listening; None when a process of another user holds the name."""
    name = f"\0ormah-serve-{os.getuid()}-{port}"
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        held.bind(name)
        held.listen(socket.SOMAXCONN)  # a refused server connects to learn the holder's pid; nothing accepts
    except OSError as exc:
        held.close()
        if exc.errno != errno.EADDRINUSE:
            raise PortUnavailable(f"cannot lock port {port}: {exc.strerror}") from None
        pid, uid = _holder(name)
        if uid == os.getuid():
            raise _refused(port, pid) from None
        return None  # another user's name (or a holder that does not listen): not a server of this user
    held.set_inheritable(True)
    return held.detach()


def _holder(name: str) -> tuple[int | None, int | None]:
    """The pid and uid of the process listening on the abstract socket `name` (None, None if it cannot say)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.setblocking(False)  # a full backlog answers EAGAIN instead of waiting
        try:
            probe.connect(name)
            pid, uid, _ = struct.unpack("3i", probe.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                              struct.calcsize("3i")))
        except OSError:
            return None, None
    return pid, uid


def _lock_file(port: int) -> int:
    """A `flock` held on `<home>/.cache/ormah/serve-<port>.lock`, the file holding the holder's pid."""
    folder = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "ormah"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        if folder.is_symlink() or folder.stat().st_uid != os.getuid():
            raise PortUnavailable(f"cannot lock port {port}: {folder} belongs to another user")
        fd = os.open(folder / f"serve-{port}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        raise PortUnavailable(f"cannot lock port {port} in {folder}: {exc.strerror}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.read(fd, 32).decode(errors="replace").strip()
        os.close(fd)
        raise _refused(port, int(holder) if holder.isdigit() else None) from None
    os.ftruncate(fd, 0)
    os.write(fd, f"{os.getpid()}\n".encode())
    os.set_inheritable(fd, True)
    return fd


def _refused(port: int, pid: int | None) -> PortUnavailable:
    return PortUnavailable(f"cannot serve on port {port}: another `ormah serve` (pid {pid or '?'}) is running "
                           f"there; stop it, or choose another port with --port or ORMAH_PORT")
