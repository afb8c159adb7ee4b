"""Site-level pages: sign in and sign out (Django auth)."""

from __future__ import annotations

import hashlib
import time

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError

MAX_FAILED_SIGN_INS = 10  # per account name AND client address, in one window; then that pair waits for its end
MAX_FAILED_SIGN_INS_PER_ADDRESS = 50  # per client address, every name together (guessing across names)
FAILED_SIGN_IN_WINDOW = 15 * 60  # seconds from the first failure (the database cache: shared by every web worker)


def _client_address(request) -> str:
    """The peer's address as the server saw it (REMOTE_ADDR). X-Forwarded-For is never read: Ormah has no setting
    for a proxy in front, and any client can send that header (docs/security.md)."""
    return str(getattr(request, "META", {}).get("REMOTE_ADDR") or "")


def _failures_key(username: str | None, address: str) -> str:
    """The cache key of the failures for one account name (as typed: trimmed, any case) from one address."""
    name = (username or "").strip().lower().encode("utf-8", "surrogatepass")
    return "sign-in-failures:" + hashlib.sha256(name + b"\0" + address.encode("utf-8", "surrogatepass")).hexdigest()


def _address_key(address: str) -> str:
    return "sign-in-failures-address:" + hashlib.sha256(address.encode("utf-8", "surrogatepass")).hexdigest()


def _failures(key: str) -> tuple[int, float]:
    """The failures counted under `key` and when their window ends (time.time()); (0, 0.0) outside a window."""
    entry = cache.get(key)
    if not (isinstance(entry, tuple) and len(entry) == 2) or entry[1] <= time.time():
        return 0, 0.0
    return entry


def _count_failure(key: str, count: int, until: float) -> None:
    # The window's end is kept with the count and each write expires then: the cache's incr would re-set the entry
    # with the cache's default timeout (300 s), moving the end to five minutes after each failure.
    now = time.time()
    if count == 0:
        until = now + FAILED_SIGN_IN_WINDOW
    cache.set(key, (count + 1, until), max(until - now, 1))


class LimitedSignIn:
    """At most MAX_FAILED_SIGN_INS wrong passwords per account name and client address in a window, and
    MAX_FAILED_SIGN_INS_PER_ADDRESS per address for every name together, for the UI's and the admin's sign-in
    forms alike (a password set with `ormah init --password` may be short; the generated one is 24 characters).
    A stranger's failures lock the stranger's address, never the owner signing in from another one."""

    def clean(self):
        """Django's check, once neither the account name from this address nor the address has failed too often."""
        address = _client_address(getattr(self, "request", None))
        key, wide = _failures_key(self.cleaned_data.get("username"), address), _address_key(address)
        count, until = _failures(key)
        wide_count, wide_until = _failures(wide)
        if count >= MAX_FAILED_SIGN_INS or wide_count >= MAX_FAILED_SIGN_INS_PER_ADDRESS:
            raise ValidationError(f"Too many failed sign-ins for this account: try again in "
                                  f"{FAILED_SIGN_IN_WINDOW // 60} minutes.", code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError:
            _count_failure(key, count, until)
            _count_failure(wide, wide_count, wide_until)
            raise
        cache.delete(key)
        return cleaned


class SignInForm(LimitedSignIn, AuthenticationForm):
    """Django's authentication form with the attributes browsers and password managers expect."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].widget.attrs.update({"autocomplete": "username", "autocapitalize": "none"})
        self.fields["password"].widget.attrs.update({"autocomplete": "current-password"})


class AdminSignInForm(LimitedSignIn, AdminAuthenticationForm):
    """The admin's sign-in form (staff only), with the same limit (set on admin.site in ormah_site/urls.py)."""


login = auth_views.LoginView.as_view(template_name="registration/login.html", authentication_form=SignInForm,
                                     redirect_authenticated_user=True)
logout = auth_views.LogoutView.as_view(next_page="login")
