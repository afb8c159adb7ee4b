"""URL map: the admin, the REST API and the web UI."""

from django.contrib import admin
from django.urls import path

from ormah_site.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    path("api/", api.urls),
]
