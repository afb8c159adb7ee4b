"""Site-level pages: sign in and sign out (Django auth)."""

from __future__ import annotations

import hashlib
import time

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm
from django.core.cache import cache
from django.core.exceptions import ValidationError

MAX_FAILED_SIGN_INS = 10  # per account name, in one window; then even the right password waits for the window's end
FAILED_SIGN_IN_WINDOW = 15 * 60  # seconds from the first failure (the database cache: shared by every web worker)


def _failures_key(username: str | None) -> str:
    name = (username or "").strip().lower().encode("utf-8", "surrogatepass")
    return "sign-in-failures:" + hashlib.sha256(name).hexdigest()


def _failures(key: str) -> tuple[int, float]:
    """The failures counted under `key` and when their window ends (time.time()); (0, 0.0) outside a window."""
    entry = cache.get(key)
    if not (isinstance(entry, tuple) and len(entry) == 2) or entry[1] <= time.time():
        return 0, 0.0
    return entry


class LimitedSignIn:
    """At most MAX_FAILED_SIGN_INS wrong passwords per account name and window, for the UI's and the admin's sign-in
    forms alike (a password set with `ormah init --password` may be short; the generated one is 24 characters)."""

    def clean(self):
        """Django's check, once the account name has not failed too often."""
        key = _failures_key(self.cleaned_data.get("username"))
        count, until = _failures(key)
        if count >= MAX_FAILED_SIGN_INS:
            raise ValidationError(f"Too many failed sign-ins for this account: try again in "
                                  f"{FAILED_SIGN_IN_WINDOW // 60} minutes.", code="throttled")
        try:
            cleaned = super().clean()
        except ValidationError:
            # The window's end is kept with the count and each write expires then: the cache's incr would re-set
            # the entry with the cache's default timeout (300 s), moving the end to five minutes after each failure.
            now = time.time()
            if count == 0:
                until = now + FAILED_SIGN_IN_WINDOW
            cache.set(key, (count + 1, until), max(until - now, 1))
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
