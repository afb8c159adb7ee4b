"""Django admin for the API tokens: read-only (the digest above all), revoked by an action, created only by
`ormah token create` (the one place that can show the secret)."""

from __future__ import annotations

from django.contrib import admin, messages

from ormah_site.models import ApiTokenRow
from ormah_site.tokens import api_token_revoke


@admin.register(ApiTokenRow)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = ("name", "created_at", "last_used_at", "revoked_at")
    list_filter = (("revoked_at", admin.EmptyFieldListFilter),)
    search_fields = ("name",)
    fields = readonly_fields = ("name", "digest", "created_at", "last_used_at", "revoked_at")
    actions = ("revoke",)

    def has_add_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Revoke the selected API tokens", permissions=["change"])
    def revoke(self, request, queryset):
        names = [row.name for row in queryset if row.revoked_at is None]
        for name in names:
            api_token_revoke(name=name)
        self.message_user(request, f"Revoked {len(names)} API token(s); every host refuses them from now on.",
                          messages.SUCCESS)
