"""The one NinjaAPI: bearer-token auth on every route, one error shape, the routers of each app."""

from __future__ import annotations

import logging

from django.http import HttpRequest
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError as NinjaValidationError
from ninja.security import HttpBearer
from pydantic import ValidationError

from maintenance.api import router as maintenance_router
from memory.api import admin_router, agent_router
from memory.domain.requests import is_too_large, validation_message
from memory.errors import OrmahError
from ormah_site.tokens import token_matches
from whisper.api import router as whisper_router

logger = logging.getLogger(__name__)


class BearerToken(HttpBearer):
    """`Authorization: Bearer <token>`, compared in constant time with ORMAH_API_TOKEN or the token file."""

    def authenticate(self, request: HttpRequest, token: str):
        return token if token_matches(token) else None


api = NinjaAPI(title="Ormah", version="0.1.0", auth=BearerToken(), urls_namespace="api",
               description="Local-first long-term memory for AI agents. Every route needs `Authorization: Bearer <token>`.")
api.add_router("/agent/", agent_router)
api.add_router("/admin/", admin_router)
api.add_router("/agent/", whisper_router)
api.add_router("/", maintenance_router)


def error_response(request, status: int, code: str, message: str, details=None):
    """The single error shape: {"error": code, "message": text, "details": ...}."""
    return api.create_response(request, {"error": code, "message": message, "details": details}, status=status)


@api.exception_handler(OrmahError)
def _ormah_error(request, exc: OrmahError):
    return error_response(request, exc.http_status, exc.code, exc.message, exc.details)


@api.exception_handler(NinjaValidationError)
def _ninja_validation(request, exc: NinjaValidationError):
    errors = exc.errors
    too_large = any("too large" in str(e.get("msg", "")).lower() or "exceeds" in str(e.get("msg", "")).lower()
                    for e in errors if isinstance(e, dict))
    first = errors[0] if errors else {}
    loc = ".".join(str(p) for p in first.get("loc", []) if p not in ("body", "payload")) if isinstance(first, dict) else ""
    msg = first.get("msg", "invalid input") if isinstance(first, dict) else str(first)
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
    return error_response(request, 401, "unauthorized", "A valid bearer token is required (see the api_token file)")


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    return error_response(request, exc.status_code, "http_error", str(exc))


@api.exception_handler(Exception)
def _unexpected(request, exc: Exception):
    # Trigger: a bug. Why: clients get the one error shape, never a traceback. Outcome: 500, logged with stack.
    logger.exception("Unhandled error on %s %s", request.method, request.path)
    return error_response(request, 500, "internal_error", "Unexpected server error; see the Ormah log")
