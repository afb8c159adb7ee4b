"""A signed-in request from a process of another user of this machine is refused (session 23, review11).

Browsers send a host's cookies to every port of it: once a person is signed in to the UI at 127.0.0.1:8787, the
browser hands the session cookie to whatever listens on 127.0.0.1 at any other port when it visits it (a page can
send it there with a link), and a process of another user listening there could replay the cookie and read every
memory through the UI. Without HTTPS no cookie attribute prevents that (`__Host-` cookies need `Secure`). So a
request that carries the session cookie over a loopback connection must come from a process of the server's own
user (or root): the kernel says whose the client's socket is (whisper.hook_net.connection_user, /proc/net/tcp). A
remote client (ORMAH_HOST set to a public address), a server other than gunicorn, or a system without
/proc/net/tcp is not checked. Reading the socket table costs the kernel a few ms, spent only on requests that carry
the session cookie (the UI and the admin, never the agent API).
"""

from __future__ import annotations

import logging
import os

from django.conf import settings
from django.http import HttpResponseForbidden

from whisper.hook_net import connection_user

logger = logging.getLogger(__name__)

MESSAGE = ("This session cookie was sent by a process of another user of this machine; it is refused. Sign in from "
           "your own browser.")


def foreign_client(request) -> int | None:
    """The uid of the client's process when it is another user's, else None."""
    sock = request.META.get("gunicorn.socket")
    if sock is None:
        return None
    try:
        uid = connection_user(sock.getpeername()[:2], sock.getsockname()[:2])
    except OSError:  # the client is gone
        return None
    return uid if uid is not None and uid not in (os.getuid(), 0) else None


class RefuseOtherUsersSessions:
    """Middleware: 403 for a request carrying the session cookie from another user's process (module docstring)."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        if settings.SESSION_COOKIE_NAME in request.COOKIES:
            uid = foreign_client(request)
            if uid is not None:
                logger.warning("Refused a session cookie sent by uid %s's process (%s)", uid, request.path)
                return HttpResponseForbidden(MESSAGE, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
