"""Django admin for the memory app.

The index tables are derived from the markdown files, so they are read-only here, except that a node's
editable fields can be changed: the admin then calls memory.services.node_update, which writes the markdown
file first and re-indexes it. Deleting a node forgets it through node_forget (the file moves to deleted/).
Ledgers (audit, merges, retrieval events, ...) are read-only. Every model of the app is registered; models
without an admin of their own below get the read-only one.
"""

from __future__ import annotations

from django import forms
from django.apps import apps
from django.contrib import admin, messages
from django.http import HttpResponseRedirect
from pydantic import ValidationError

from memory import services
from memory.domain.enums import NodeType, Tier
from memory.domain.requests import NodePatch, validation_message
from memory.errors import OrmahError
from memory.models import AuditRow, EdgeRow, NodeRow, NodeTagRow


class ReadOnlyAdmin(admin.ModelAdmin):
    """Derived rows and ledgers: viewable, never written from the admin."""

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


# ---------------------------------------------------------------------------
# Nodes: edits and deletes go through the services
# ---------------------------------------------------------------------------

_EDITABLE = ("title", "content", "type", "tier", "space", "tags_text", "confidence")


class NodeRowForm(forms.ModelForm):
    """The editable fields of a node; clean() turns the changed ones into a NodePatch (validated by the domain)."""

    type = forms.ChoiceField(choices=[(t.value, t.value) for t in NodeType])
    tier = forms.ChoiceField(choices=[(t.value, t.value) for t in Tier])
    tags_text = forms.CharField(label="Tags", required=False, help_text="Separated by spaces or commas.")

    class Meta:
        model = NodeRow
        fields = _EDITABLE

    def clean(self):
        data = super().clean()
        values = {
            "title": (data.get("title") or "").strip() or None, "content": data.get("content"),
            "type": data.get("type"), "tier": data.get("tier"), "space": (data.get("space") or "").strip() or None,
            "tags": [t for t in (data.get("tags_text") or "").replace(",", " ").split() if t],
            "confidence": data.get("confidence"),
        }
        changed = {("tags" if name == "tags_text" else name) for name in self.changed_data}
        try:
            self.patch = NodePatch(**{k: v for k, v in values.items() if k in changed})
        except ValidationError as exc:
            raise forms.ValidationError(validation_message(exc)) from None
        return data


class TagInline(admin.TabularInline):
    model = NodeTagRow
    extra = 0
    can_delete = False
    fields = readonly_fields = ("tag",)

    def has_add_permission(self, request, obj=None):
        return False


class OutEdgeInline(admin.TabularInline):
    model = EdgeRow
    fk_name = "source"
    extra = 0
    can_delete = False
    verbose_name_plural = "connections out (edit them in the UI or the file)"
    fields = readonly_fields = ("edge_type", "target", "weight", "reason")

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(NodeRow)
class NodeRowAdmin(admin.ModelAdmin):
    form = NodeRowForm
    list_display = ("short_id", "__str__", "type", "tier", "space", "importance", "access_count", "updated", "is_self")
    list_filter = ("tier", "type", "is_self", "space")
    search_fields = ("uid", "title", "content", "tags_text")
    ordering = ("-updated",)
    list_per_page = 50
    show_full_result_count = False
    inlines = [TagInline, OutEdgeInline]
    actions = ["forget_selected", "mark_outdated"]
    readonly_fields = tuple(f.name for f in NodeRow._meta.concrete_fields if f.name not in (*_EDITABLE, "id"))
    fieldsets = (
        (None, {"fields": _EDITABLE}),
        ("From the file (read-only)", {"classes": ("collapse",), "fields": readonly_fields}),
    )

    def has_add_permission(self, request):
        return False  # memories are created with remember (UI, API, CLI), which links and embeds them

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)
        return actions

    def save_model(self, request, obj, form, change):
        """Write the change to the markdown file through node_update (never obj.save())."""
        if not form.patch.changes():
            return
        try:
            services.node_update(ref=obj.uid, patch=form.patch)
        except OrmahError as exc:
            request._ormah_failed = True
            self.message_user(request, f"Not saved: {exc.message}", messages.ERROR)

    def save_related(self, request, form, formsets, change):
        """Tags and edges come from the file; nothing to save here."""

    def construct_change_message(self, request, form, formsets, add=False):
        return [{"changed": {"fields": sorted(form.patch.changes())}}] if form.patch.changes() else []

    def response_change(self, request, obj):
        if getattr(request, "_ormah_failed", False):
            return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)

    def delete_model(self, request, obj):
        """Forget the memory: its file moves to deleted/ and can be restored."""
        try:
            services.node_forget(ref=obj.uid)
        except OrmahError as exc:
            self.message_user(request, f"Not forgotten: {exc.message}", messages.ERROR)

    def delete_queryset(self, request, queryset):
        for obj in list(queryset):
            self.delete_model(request, obj)

    def has_delete_permission(self, request, obj=None):
        return obj is None or not obj.is_self

    @admin.action(description="Forget selected memories (restorable)")
    def forget_selected(self, request, queryset):
        done = 0
        for uid in list(queryset.values_list("uid", flat=True)):
            try:
                services.node_forget(ref=uid)
                done += 1
            except OrmahError as exc:
                self.message_user(request, f"{uid[:8]}: {exc.message}", messages.WARNING)
        self.message_user(request, f"Forgot {done} memor{'y' if done == 1 else 'ies'}.")

    @admin.action(description="Mark selected memories outdated")
    def mark_outdated(self, request, queryset):
        done = 0
        for uid in list(queryset.values_list("uid", flat=True)):
            try:
                services.node_mark_outdated(ref=uid, reason="marked in the admin")
                done += 1
            except OrmahError as exc:
                self.message_user(request, f"{uid[:8]}: {exc.message}", messages.WARNING)
        self.message_user(request, f"Marked {done} memor{'y' if done == 1 else 'ies'} outdated.")


# ---------------------------------------------------------------------------
# Derived rows and ledgers: read-only
# ---------------------------------------------------------------------------

@admin.register(EdgeRow)
class EdgeRowAdmin(ReadOnlyAdmin):
    list_display = ("source", "edge_type", "target", "weight")
    list_filter = ("edge_type",)
    search_fields = ("source__uid", "target__uid", "reason")
    list_select_related = ("source", "target")
    show_full_result_count = False


@admin.register(NodeTagRow)
class NodeTagRowAdmin(ReadOnlyAdmin):
    list_display = ("tag", "node")
    search_fields = ("tag",)
    list_select_related = ("node",)
    show_full_result_count = False


@admin.register(AuditRow)
class AuditRowAdmin(ReadOnlyAdmin):
    list_display = ("performed_at", "operation", "node_uid")
    list_filter = ("operation",)
    search_fields = ("node_uid",)
    date_hierarchy = "performed_at"
    show_full_result_count = False


def _register_rest() -> None:
    """Every other model of the app (caches, index facts, ledgers) gets the read-only admin."""
    for model in apps.get_app_config("memory").get_models():
        if not admin.site.is_registered(model):
            fields = [f.name for f in model._meta.concrete_fields if f.get_internal_type() != "BinaryField"]
            attrs = {"list_display": tuple(fields[:6]), "show_full_result_count": False}
            admin.site.register(model, type(f"{model.__name__}Admin", (ReadOnlyAdmin,), attrs))


_register_rest()
