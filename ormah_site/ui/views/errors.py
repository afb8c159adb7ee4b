"""Error answers of the whole UI that Django would otherwise give as its bare pages (settings.CSRF_FAILURE_VIEW)."""

from __future__ import annotations

from urllib.parse import urlparse

from django.conf import settings
from django.contrib.auth import logout
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
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


STALE_SIGN_OUT = ("Ormah could not tell that this sign-out came from one of its own pages, so you are still signed "
                  "in. Sign out here:")


def _from_this_site(request: HttpRequest) -> bool:
    """The browser says the request comes from a page of this site: its Origin header (which a page cannot set) is
    this site's origin or a trusted one, as Django's CSRF check compares it."""
    origin = request.headers.get("Origin", "")
    here = f"{'https' if request.is_secure() else 'http'}://{request.get_host()}"
    return bool(origin) and (origin == here or origin in settings.CSRF_TRUSTED_ORIGINS)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """A form or htmx request whose CSRF token no longer matches (the session changed since the page loaded). htmx
    gets the message in the page's message area (HX-Retarget), so the screen stays as it was; a form, a page.

    A sign-out from a page of this site signs out whatever its token: the token of a page loaded before the last
    sign-in is stale, and a sign-out only ends the session (it changes no data, and a page of another site cannot
    send it: its Origin differs). Any other sign-out gets a page with a fresh Sign out button."""
    if request.method == "POST" and request.path == reverse("logout"):
        if _from_this_site(request):
            logout(request)
            return redirect("login")  # what LogoutView(next_page="login") answers
        return render(request, "stale_page.html", {"message": STALE_SIGN_OUT, "sign_out": True}, status=403)
    if is_htmx(request):
        page = _same_site_path(request, request.headers.get("HX-Current-URL", ""))
        response = render(request, "_toast.html", {"errors": [STALE], "reload": page}, status=403)
        response["HX-Retarget"] = "#toast"
        response["HX-Reswap"] = "outerHTML"
        return response
    page = _same_site_path(request, request.headers.get("Referer", ""))
    return render(request, "stale_page.html", {"message": STALE, "reload": page}, status=403)
