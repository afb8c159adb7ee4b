"""A RunSQL that runs on one database vendor only: the FTS, vector and trigger DDL differ per engine."""

from __future__ import annotations

from django.db import migrations


class VendorSQL(migrations.RunSQL):
    """RunSQL applied only when the migrating connection's vendor is `vendor` ("sqlite" or "postgresql")."""

    def __init__(self, vendor: str, sql, reverse_sql=None, **kwargs) -> None:
        super().__init__(sql, reverse_sql, **kwargs)
        self.vendor = vendor

    def deconstruct(self):
        name, args, kwargs = super().deconstruct()
        return name, [self.vendor, *args], kwargs

    def database_forwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == self.vendor:
            super().database_forwards(app_label, schema_editor, from_state, to_state)

    def database_backwards(self, app_label, schema_editor, from_state, to_state):
        if schema_editor.connection.vendor == self.vendor:
            super().database_backwards(app_label, schema_editor, from_state, to_state)

    def describe(self):
        return f"Raw SQL operation ({self.vendor} only)"
