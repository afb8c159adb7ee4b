"""How the CLI reaches the API: the running server over HTTP, else the same API in this process.

The thin path (urllib, the token file) imports neither Django nor the model, so a command takes a few tens of
milliseconds while `ormah serve` runs. When nothing listens on the server's address, the command runs the very
same API routes in-process through Django's WSGI handler (slow: Django and the model start), so both paths give
the same answers and the same output. A server that answers with an error is never retried in-process: the
request may have been carried out.
"""

from __future__ import annotations

import io
import json
import logging
import os
import sys
import urllib.error
import urllib.parse
import urllib.request

from ormah_site.cli.env import api_token, ormah_home, server_url
from whisper.hook_net import foreign_server, urlopen_direct

HTTP_TIMEOUT = 120.0  # a remember embeds and auto-links; a busy machine can take seconds


class ApiError(Exception):
    """The API answered with its error shape (or something else that is not a success)."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


class ServerDown(Exception):
    """Nothing answered at the server's address."""


def _path(path: str, query: dict | None) -> str:
    params = {k: v for k, v in (query or {}).items() if v is not None}
    return "/api" + path + (("?" + urllib.parse.urlencode(params)) if params else "")


def _decode(status: int, raw: bytes) -> dict | list:
    try:
        data = json.loads(raw.decode("utf-8")) if raw else {}
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ApiError(status, "bad_response", f"The server answered {status} with something that is not JSON") \
            from None
    if status >= 400:
        if isinstance(data, dict) and "message" in data:
            raise ApiError(status, str(data.get("error", "error")), str(data["message"]))
        raise ApiError(status, "error", f"The server answered {status}")
    return data


def _refused(token: str | None) -> ApiError:
    """The server's 401, said so that the person can act: no token at all, or one of another home."""
    if token is None:
        where = os.environ.get("ORMAH_TOKEN_FILE", "").strip() or str(ormah_home() / "api_token")
        return ApiError(401, "unauthorized", f"No API token: ORMAH_API_TOKEN is not set and {where} is missing or "
                                             "empty (`ormah init` writes a new one)")
    return ApiError(401, "unauthorized", f"The server at {server_url()} refused the API token: is it serving "
                                         "another ORMAH_HOME? (set ORMAH_URL or ORMAH_PORT)")


def http_call(method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict | list:
    """Call the running server; ServerDown when nothing listens there."""
    url = server_url() + _path(path, query)
    problem = foreign_server(url)
    if problem:
        raise ApiError(0, "foreign_server", problem)
    headers = {"Accept": "application/json"}
    token = api_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, headers=headers, method=method)
    try:
        with urlopen_direct(request, timeout=HTTP_TIMEOUT) as response:
            return _decode(response.status, response.read())
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            raise _refused(token) from None
        return _decode(exc.code, exc.read())
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, (ConnectionRefusedError, FileNotFoundError)) or "refused" in str(exc.reason):
            raise ServerDown(str(exc.reason)) from None
        raise ApiError(0, "unreachable", f"Could not reach the server at {server_url()}: {exc.reason}") from None
    except ConnectionRefusedError as exc:
        raise ServerDown(str(exc)) from None


def local_call(method: str, path: str, body: dict | None = None, query: dict | None = None) -> dict | list:
    """The same request through the API in this process (Django's WSGI handler; nothing listens on a port)."""
    from ormah_site.cli.django_boot import django_setup

    django_setup()
    logging.getLogger("django.request").setLevel(logging.ERROR)  # a 4xx is the command's message, not a log line
    from django.core.handlers.wsgi import WSGIHandler

    from ormah_site.tokens import token_ensure

    full = _path(path, query)
    route, _, query_string = full.partition("?")
    raw = json.dumps(body).encode("utf-8") if body is not None else b""
    environ = {
        "REQUEST_METHOD": method, "PATH_INFO": route, "QUERY_STRING": query_string, "SCRIPT_NAME": "",
        "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "0", "HTTP_HOST": "127.0.0.1", "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1", "HTTP_AUTHORIZATION": f"Bearer {api_token() or token_ensure()}",
        "HTTP_ACCEPT": "application/json", "CONTENT_TYPE": "application/json", "CONTENT_LENGTH": str(len(raw)),
        "wsgi.input": io.BytesIO(raw), "wsgi.errors": sys.stderr, "wsgi.url_scheme": "http",
        "wsgi.version": (1, 0), "wsgi.multithread": False, "wsgi.multiprocess": False, "wsgi.run_once": True,
    }
    answer: dict = {}

    def start_response(status, headers, exc_info=None):
        answer["status"] = int(status.split(" ", 1)[0])

    chunks = WSGIHandler()(environ, start_response)
    try:
        raw_out = b"".join(chunks)
    finally:
        getattr(chunks, "close", lambda: None)()
    return _decode(answer["status"], raw_out)


def call(method: str, path: str, body: dict | None = None, query: dict | None = None, *,
         local_only: bool = False) -> dict | list:
    """The running server when one answers, else the in-process API."""
    if not local_only:
        try:
            return http_call(method, path, body, query)
        except ServerDown:
            _say_in_process()
    return local_call(method, path, body, query)


_said: list[bool] = []


def _say_in_process() -> None:
    """Tell a person at a terminal, once, that no server answered and why the command takes seconds: with
    `make run` on another port and ORMAH_PORT missing in this terminal, every command went in-process unsaid.
    Scripts and agents (stderr not a terminal) see nothing."""
    if _said or not sys.stderr.isatty():
        return
    _said.append(True)
    print(f"ormah: no server answers at {server_url()}, so this runs in-process (a few seconds); start `ormah serve`, "
          "or set ORMAH_PORT or ORMAH_URL to the running server's address", file=sys.stderr)
