"""Every URL the site serves, from Django's resolver, with path parameters filled with plausible values."""

from __future__ import annotations

import re

from django.urls import URLPattern, URLResolver, get_resolver

BY_NAME = {"name": "auto_linker", "path": "ui/app.js", "url": "x"}
BY_CONVERTER = {"int": "1", "path": "1"}


def _walk(patterns, prefix: str = ""):
    for pattern in patterns:
        route = prefix + str(pattern.pattern).lstrip("^").rstrip("$")
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, route)
        elif isinstance(pattern, URLPattern):
            yield route, pattern


def concrete(route: str) -> str:
    """/route with <conv:name> and (?P<name>...) filled in."""
    def group(match: re.Match) -> str:  # a regex group: its name's value, else its first alternative
        return BY_NAME.get(match.group(1)) or match.group(2).split("|")[0]

    def fill(match: re.Match) -> str:
        converter, name = match.group(1), match.group(2)
        return BY_CONVERTER.get(converter or "") or BY_NAME.get(name) or "abcd1234"

    route = re.sub(r"\(\?P<(\w+)>([^)]*)\)", group, route)
    route = re.sub(r"<(?:(\w+):)?(\w+)>", fill, route)
    return "/" + route


def all_routes() -> list[tuple[str, URLPattern]]:
    return list(_walk(get_resolver().url_patterns))


def api_urls() -> list[str]:
    return sorted({concrete(r) for r, p in all_routes() if r.startswith("api/") and p.name != "api-root"})


def admin_urls() -> list[str]:
    return sorted({concrete(r) for r, _ in all_routes() if r.startswith("admin/")})


def ui_urls() -> list[str]:
    """Every page and form of the web UI: not the API, static files, the admin, or signing in and out."""
    skip = ("api/", "static/", "admin/", "login/", "logout/")
    return sorted({concrete(r) for r, _ in all_routes() if not r.startswith(skip)})
