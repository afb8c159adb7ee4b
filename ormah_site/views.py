"""Site-level pages: sign in and sign out (Django auth)."""

from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.contrib.auth.forms import AuthenticationForm


class SignInForm(AuthenticationForm):
    """Django's authentication form with the attributes browsers and password managers expect."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["username"].widget.attrs.update({"autocomplete": "username", "autocapitalize": "none"})
        self.fields["password"].widget.attrs.update({"autocomplete": "current-password"})


login = auth_views.LoginView.as_view(template_name="registration/login.html", authentication_form=SignInForm,
                                     redirect_authenticated_user=True)
logout = auth_views.LogoutView.as_view(next_page="login")
