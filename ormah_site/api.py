"""The one NinjaAPI: bearer-token auth on every route, one error shape, the routers of each app."""

from __future__ import annotations

import json
import logging
from functools import wraps
from pathlib import Path
from typing import ClassVar

import ninja
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.contrib.auth.views import redirect_to_login
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import escape
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError as NinjaValidationError
from ninja.openapi.docs import DocsBase
from ninja.params.models import QueryModel
from ninja.parser import Parser
from ninja.security import HttpBearer, django_auth_is_staff
from pydantic import ValidationError

from maintenance.api import router as maintenance_router
from memory.api import admin_router, agent_router
from memory.domain.requests import is_too_large, validation_message
from memory.errors import OrmahError, ValidationFailed
from memory.schemas import TOO_LARGE_ERRORS
from memory.trust_api import router as trust_router
from ormah_site import __version__
from ormah_site.tokens import token_matches
from whisper.api import router as whisper_router

logger = logging.getLogger(__name__)
UNAUTHORIZED_MESSAGE = "A valid bearer token is required (see the api_token file)"


class BearerToken(HttpBearer):
    """`Authorization: Bearer <token>`: ORMAH_API_TOKEN, the token file or a database token (ormah_site/tokens.py),
    judged once per request (the docs guard and the route share the verdict)."""

    def authenticate(self, request: HttpRequest, token: str):
        verdicts = request.__dict__.setdefault("_ormah_token_verdicts", {})
        if token not in verdicts:
            verdicts[token] = token_matches(token)
        return token if verdicts[token] else None


class StrictJSONParser(Parser):
    """Bodies are JSON objects of valid UTF-8 text; anything else is a 400 before validation starts."""

    def parse_body(self, request: HttpRequest) -> dict:
        data = json.loads(request.body)
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("the body must be valid UTF-8 text (it holds a lone surrogate escape)") from None
        return data


# ---------------------------------------------------------------------------
# Docs: the token or a staff session; Swagger UI from ninja's bundled files, never a CDN
# ---------------------------------------------------------------------------

DOCS_ASSETS = {name: Path(ninja.__file__).parent / "static" / "ninja" / name
               for name in ("swagger-ui.css", "swagger-ui-bundle.js", "swagger-ui-init.js", "favicon.png")}
_bearer = BearerToken()


def _docs_allowed(request: HttpRequest) -> bool:
    return django_auth_is_staff(request) is not None or _bearer(request) is not None


def docs_access(view):
    """Guard the schema and docs: a bearer token or a logged-in staff user; browsers are sent to log in."""

    @wraps(view)
    def guarded(request: HttpRequest, *args, **kwargs):
        if _docs_allowed(request):
            return view(request, *args, **kwargs)
        if "text/html" in request.headers.get("Accept", "") and request.path.rstrip("/").endswith("/docs"):
            return redirect_to_login(request.get_full_path())
        return _unauthorized(request, None)

    return guarded


class LocalSwagger(DocsBase):
    """Swagger UI served from django-ninja's bundled assets (ninja is not an installed app here)."""

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs) -> HttpResponse:
        asset = {name: reverse(f"{api.urls_namespace}:docs-asset", kwargs={"name": name}) for name in DOCS_ASSETS}
        settings_json = json.dumps({"url": self.get_openapi_url(api, kwargs), "layout": "BaseLayout",
                                    "deepLinking": True, "persistAuthorization": True})
        html = f"""<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{escape(api.title)} API</title>
<link rel="stylesheet" href="{asset['swagger-ui.css']}"><link rel="icon" href="{asset['favicon.png']}"></head>
<body data-csrf-token="" data-api-csrf="">
<script type="application/json" id="swagger-settings">{escape(settings_json)}</script>
<div id="swagger-ui"></div>
<script src="{asset['swagger-ui-bundle.js']}"></script><script src="{asset['swagger-ui-init.js']}"></script>
</body></html>"""
        return HttpResponse(html)


api = NinjaAPI(title="Ormah", version=__version__, auth=BearerToken(), urls_namespace="api",
               parser=StrictJSONParser(), docs=LocalSwagger(), docs_decorator=docs_access,
               description="Local-first long-term memory for AI agents. Every route needs "
                           "`Authorization: Bearer <token>` (the `api_token` file in ORMAH_HOME, or a "
                           "token made with `ormah token create NAME`).")
api.add_router("/agent/", agent_router)
api.add_router("/admin/", admin_router)
api.add_router("/agent/", whisper_router)
api.add_router("/agent/", trust_router)
api.add_router("/", maintenance_router)


class KnownQueryNames(QueryModel):
    """First of every operation's parameter models: a query parameter the operation does not declare is a 422.

    django-ninja keeps only the names it knows and drops the rest, so a typo (`GET /api/agent/nodes?type=fact`
    for `types`) would answer as if no filter were asked for; the Query schemas' `extra="forbid"` never sees them.
    It declares no field, so the OpenAPI schema is unchanged.
    """

    known: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def resolve(cls, request: HttpRequest, api: NinjaAPI, path_params: dict):
        unknown = sorted(set(request.GET) - cls.known)
        if unknown:
            allowed = ", ".join(sorted(cls.known)) or "none"
            raise ValidationFailed(f"unknown query parameter {', '.join(unknown)} (this route takes: {allowed})",
                                   details={"unknown": unknown, "allowed": sorted(cls.known)})
        return cls()


def _reject_unknown_query_names(ninja_api: NinjaAPI) -> None:
    for _prefix, router in ninja_api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                if operation.models and operation.models[0].__name__ == KnownQueryNames.__name__:
                    continue
                known = frozenset(name for model in operation.models if model.__ninja_param_source__ == "query"
                                  for name in model.__ninja_flatten_map__)
                checker = type(KnownQueryNames.__name__, (KnownQueryNames,), {"known": known})
                operation.models.insert(0, checker)



@api.get("/docs/assets/{name}", auth=[BearerToken(), django_auth_is_staff], include_in_schema=False,
         url_name="docs-asset")
def docs_asset(request: HttpRequest, name: str):
    """One of the bundled Swagger UI files."""
    if name not in DOCS_ASSETS:
        raise Http404(name)
    response = FileResponse(DOCS_ASSETS[name].open("rb"))
    response["Cache-Control"] = "private, max-age=86400"
    return response


def error_response(request, status: int, code: str, message: str, details=None):
    """The single error shape: {"error": code, "message": text, "details": ...}."""
    return api.create_response(request, {"error": code, "message": message, "details": details}, status=status)


@api.exception_handler(OrmahError)
def _ormah_error(request, exc: OrmahError):
    return error_response(request, exc.http_status, exc.code, exc.message, exc.details)


@api.exception_handler(NinjaValidationError)
def _ninja_validation(request, exc: NinjaValidationError):
    errors = exc.errors
    too_large = any(e.get("type") in TOO_LARGE_ERRORS for e in errors if isinstance(e, dict))
    first = errors[0] if errors else {}
    loc = ".".join(str(p) for p in first.get("loc", []) if p not in ("body", "payload")) if isinstance(first, dict) else ""
    msg = first.get("msg", "invalid input") if isinstance(first, dict) else str(first)
    msg = msg.removeprefix("Value error, ")
    safe = [{k: v for k, v in e.items() if k in ("loc", "msg", "type")} for e in errors if isinstance(e, dict)]
    return error_response(request, 413 if too_large else 422, "payload_too_large" if too_large else "validation_failed",
                          f"{loc}: {msg}" if loc else msg, safe)


@api.exception_handler(ValidationError)
def _pydantic_validation(request, exc: ValidationError):
    if is_too_large(exc):
        return error_response(request, 413, "payload_too_large", validation_message(exc))
    return error_response(request, 422, "validation_failed", validation_message(exc))


@api.exception_handler(AuthenticationError)
def _unauthorized(request, exc):
    return error_response(request, 401, "unauthorized", UNAUTHORIZED_MESSAGE)


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    cause = exc.__cause__
    if isinstance(cause, RequestDataTooBig):
        return error_response(request, 413, "payload_too_large", "The request body is too large")
    if exc.status_code == 400:
        reason = f": {str(cause)[:200]}" if cause is not None else ""
        return error_response(request, 400, "bad_request", f"{exc}{reason}")
    return error_response(request, exc.status_code, "http_error", str(exc))


@api.exception_handler(Http404)
def _not_found(request, exc: Http404):
    return error_response(request, 404, "not_found", "No such resource")


@api.exception_handler(RequestDataTooBig)
def _too_big(request, exc: RequestDataTooBig):
    return error_response(request, 413, "payload_too_large", "The request body is too large")


# SQLite's words for an index it cannot write (a full disk, a read-only home or file, a failing device).
INDEX_STORAGE_FAILURES = ("database or disk is full", "readonly database", "disk i/o error")


@api.exception_handler(OperationalError)
def _index_storage(request, exc: OperationalError):
    # Trigger: the index cannot be written. Why: like a full memory folder it is the disk, not a bug: 507, as every
    # write that fails on the files answers. Outcome: anything else an OperationalError says stays a logged 500.
    if any(words in str(exc).lower() for words in INDEX_STORAGE_FAILURES):
        logger.warning("The index cannot be written on %s %s: %s", request.method, request.path, exc)
        return error_response(request, 507, "storage_error",
                              f"The index cannot be written ({exc}): is the disk full or the home read-only?")
    return _unexpected(request, exc)


@api.exception_handler(Exception)
def _unexpected(request, exc: Exception):
    # Trigger: a bug. Why: clients get the one error shape, never a traceback. Outcome: 500, logged with stack.
    logger.exception("Unhandled error on %s %s", request.method, request.path)
    return error_response(request, 500, "internal_error", "Unexpected server error; see the Ormah log")


_reject_unknown_query_names(api)  # last: after every route, the docs assets' included
