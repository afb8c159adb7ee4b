"""`ormah serve` checks its address before it starts anything: a busy port is a clear error, not a dying child."""

from __future__ import annotations

import os
import socket


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
