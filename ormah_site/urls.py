"""URL map: the admin, the REST API (each app's router, composed in ormah_site.api), static files, the web UI."""

from django.contrib import admin
from django.contrib.staticfiles.views import serve as static_serve
from django.urls import include, path, re_path
from django.views.decorators.cache import cache_control

from ormah_site import views as site_views
from ormah_site.api import api
from ormah_site.api_errors import api_not_found

admin.site.login_form = site_views.AdminSignInForm  # the sign-in limit of the UI's form, on the admin's too

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
    re_path(r"^api/(?P<rest>.*)$", api_not_found, name="api-not-found"),  # JSON 404, never a slash redirect
    path("login/", site_views.login, name="login"),
    path("logout/", site_views.logout, name="logout"),
    # Static files are served by Django itself (also under gunicorn): Ormah is a local, single-user app, and
    # the browser revalidates (If-Modified-Since) instead of keeping stale UI code.
    re_path(r"^static/(?P<path>.*)$", cache_control(no_cache=True)(static_serve), {"insecure": True}),
    path("", include("ormah_site.ui.urls")),
]
