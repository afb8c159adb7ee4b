"""The documents store's tables (PostgreSQL only; the app is installed only there)."""

from __future__ import annotations

from django.db import models


class DocumentRow(models.Model):
    """Canonical (PostgreSQL): a memory file's exact bytes; each host's folder is a cache of these rows."""

    path = models.CharField(max_length=500, primary_key=True)  # under the memory folder: nodes/x.md, deleted/x.md
    node_id = models.CharField(max_length=36, blank=True, default="")
    body = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    mtime_ns = models.BigIntegerField(default=0)
    version = models.IntegerField()
    seq = models.BigIntegerField(db_index=True)  # the DocumentVersionRow that wrote it

    class Meta:
        app_label = "docstore"

    def __str__(self) -> str:
        return f"{self.path} v{self.version}"


class DocumentVersionRow(models.Model):
    """Canonical (PostgreSQL): every version of every document in the order the hosts wrote them (`seq`); an empty
    sha256 means the path was removed."""

    seq = models.BigAutoField(primary_key=True)
    path = models.CharField(max_length=500, db_index=True)
    node_id = models.CharField(max_length=36, blank=True, default="")
    version = models.IntegerField()
    body = models.BinaryField(null=True)
    sha256 = models.CharField(max_length=64, blank=True, default="")
    mtime_ns = models.BigIntegerField(default=0)
    changed = models.DateTimeField()

    class Meta:
        app_label = "docstore"

    def __str__(self) -> str:
        return f"{self.path} v{self.version}"
