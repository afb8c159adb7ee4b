"""Every answer under /api/ that is an error is JSON in the one error shape, whoever produced it.

Ninja's own handlers (ormah_site/api.py) cover errors raised inside a route. What happens before or around the
routes answered HTML or an empty body: a path no route matches (Django's 404 page), a trailing slash, a method a
route does not take (405 with no body), CSRF or server errors from the stack. This middleware rewrites those into
{"error", "message", "details"} and keeps the status (and the Allow header of a 405).
"""

from __future__ import annotations

import json

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve

API_PREFIX = "/api/"
CODES = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
         413: "payload_too_large", 500: "internal_error"}


def _route_exists(path: str) -> bool:
    try:
        match = resolve(path)
    except Resolver404:
        return False
    return match.url_name != "api-not-found"


def _host_allowed(request: HttpRequest) -> bool:
    """Whether the request's Host header is one ALLOWED_HOSTS accepts (Django answers 400 to any other)."""
    from django.conf import settings
    from django.http.request import split_domain_port, validate_host

    host = request.META.get("HTTP_HOST")
    if not host:  # Django then takes SERVER_NAME, the address the server bound
        return True
    domain, _ = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)


def _message(request: HttpRequest, response: HttpResponse) -> str:
    where = f"{request.method} {request.path}"
    if response.status_code == 404:
        if request.path.endswith("/") and _route_exists(request.path.rstrip("/")):
            return f"No such route: {where} (drop the trailing slash: {request.path.rstrip('/')})"
        return f"No such route: {where} (see /api/docs)"
    if response.status_code == 405:
        allowed = response.get("Allow", "")
        return f"{request.method} is not allowed on {request.path}" + (f"; allowed: {allowed}" if allowed else "")
    if response.status_code == 403:
        return f"Forbidden: {where}"
    if response.status_code >= 500:
        return "Unexpected server error; see the Ormah log"
    if response.status_code == 400 and not _host_allowed(request):
        # A client sent here by a host name (ORMAH_URL=http://mylaptop:8787) saw only "400 Bad Request" (session 25)
        return (f"This server does not answer to the host name {request.META.get('HTTP_HOST', '')!r}: use "
                "127.0.0.1 or localhost, or list the name in ORMAH_ALLOWED_HOSTS (it guards against DNS rebinding)")
    return f"{response.status_code} {getattr(response, 'reason_phrase', '')}".strip()


def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """The view behind /api/<anything no route matched>: a JSON 404 (also ends Django's slash redirects).

    Like every API URL it needs the token: without one it answers 401, so it tells nothing about the routes."""
    from ormah_site.api import UNAUTHORIZED_MESSAGE, BearerToken

    if BearerToken()(request) is None:
        body = {"error": "unauthorized", "message": UNAUTHORIZED_MESSAGE, "details": None}
        return HttpResponse(json.dumps(body), status=401, content_type="application/json")
    body = {"error": "not_found", "message": _message(request, HttpResponse(status=404)), "details": None}
    return HttpResponse(json.dumps(body), status=404, content_type="application/json")


class ApiJsonErrors:
    """Middleware: error answers under /api/ that are not JSON become the JSON error shape."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not request.path.startswith(API_PREFIX) or response.status_code < 400:
            return response
        if response.get("Content-Type", "").startswith("application/json"):
            return response
        body = {"error": CODES.get(response.status_code, "http_error"), "message": _message(request, response),
                "details": None}
        answer = HttpResponse(json.dumps(body), status=response.status_code, content_type="application/json")
        if response.has_header("Allow"):
            answer["Allow"] = response["Allow"]
        return answer
