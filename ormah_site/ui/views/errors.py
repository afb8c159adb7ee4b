"""Error answers of the whole UI that Django would otherwise give as its bare pages (settings.CSRF_FAILURE_VIEW)."""

from __future__ import annotations

from urllib.parse import urlparse

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme

from ormah_site.ui.http import is_htmx

STALE = ("This page is out of date: it was loaded before you last signed in or out (here or in another tab), so "
         "Ormah refused the action and changed nothing. Reload the page, then try again.")


def _same_site_path(request: HttpRequest, url: str) -> str:
    """The path and query of `url` when it is a page of this site, else the graph (never another site)."""
    if url and url_has_allowed_host_and_scheme(url, allowed_hosts={request.get_host()},
                                               require_https=request.is_secure()):
        parts = urlparse(url)
        return parts.path + (f"?{parts.query}" if parts.query else "")
    return "/"


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form or htmx request whose CSRF token no longer matches (the session changed since the page loaded). htmx
    gets the message in the page's message area (HX-Retarget), so the screen stays as it was; a form, a page."""
    if is_htmx(request):
        page = _same_site_path(request, request.headers.get("HX-Current-URL", ""))
        response = render(request, "_toast.html", {"errors": [STALE], "reload": page}, status=403)
        response["HX-Retarget"] = "#toast"
        response["HX-Reswap"] = "outerHTML"
        return response
    page = _same_site_path(request, request.headers.get("Referer", ""))
    return render(request, "stale_page.html", {"message": STALE, "reload": page}, status=403)
