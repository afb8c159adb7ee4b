"""Content-Security-Policy on every response: scripts only from this server, nothing framed, nothing posted away.

Django 5.2 has no CSP support of its own. The pages load every script as a file (htmx runs with allowEval off,
the API docs page initialises Swagger from a file), so `script-src 'self'` holds; inline `style` attributes
remain in the templates, hence `'unsafe-inline'` for styles only.
"""

from __future__ import annotations

POLICY = "; ".join([
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
])


class ContentSecurityPolicy:
    """Middleware: set the policy unless a view set its own."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", POLICY)
        return response
