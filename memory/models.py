"""Django models: the derived index of the markdown files, plus ledgers that are not derived."""

from __future__ import annotations

from django.db import models


class NodeRow(models.Model):
    """Derived: rebuilt from markdown. One row per live node file."""

    uid = models.CharField(max_length=36, unique=True)
    short_id = models.CharField(max_length=8, db_index=True)
    type = models.CharField(max_length=20, db_index=True)
    tier = models.CharField(max_length=10, db_index=True)
    space = models.CharField(max_length=100, null=True, blank=True, db_index=True)
    space_locked = models.BooleanField(default=False)
    title = models.TextField(blank=True, default="")
    content = models.TextField()
    tags_text = models.TextField(blank=True, default="")
    source = models.CharField(max_length=200)
    connections_json = models.TextField(default="[]")
    confidence = models.FloatField(default=1.0)
    importance = models.FloatField(default=0.5)
    access_count = models.IntegerField(default=0)
    stability = models.FloatField(default=1.0)
    created = models.DateTimeField(db_index=True)
    updated = models.DateTimeField()
    last_accessed = models.DateTimeField()
    last_review = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)
    is_self = models.BooleanField(default=False)
    file_path = models.CharField(max_length=500, unique=True)
    file_hash = models.CharField(max_length=64)
    file_mtime_ns = models.BigIntegerField(default=0)
    file_size = models.BigIntegerField(default=0)
    embed_hash = models.CharField(max_length=64, blank=True, default="")
    indexed_seq = models.BigIntegerField(default=0, db_index=True)
    pinned = models.BooleanField(default=False)
    authority = models.IntegerField(default=0)
    read_only = models.BooleanField(default=False)
    trust_json = models.TextField(default="{}")  # provenance keys and superseded_by (docs/trust.md)

    class Meta:
        verbose_name = "node (index)"
        verbose_name_plural = "nodes (index)"

    def __str__(self) -> str:
        return f"{self.short_id} {self.title or self.content[:40]}"


class EdgeRow(models.Model):
    """Derived: rebuilt from markdown (connections in the source node's file)."""

    source = models.ForeignKey(NodeRow, on_delete=models.CASCADE, related_name="out_edges")
    target = models.ForeignKey(NodeRow, on_delete=models.CASCADE, related_name="in_edges")
    edge_type = models.CharField(max_length=20, db_index=True)
    weight = models.FloatField(default=0.5)
    reason = models.TextField(null=True, blank=True)
    valid_from = models.DateTimeField(null=True, blank=True)
    valid_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["source", "target", "edge_type"], name="edge_unique_typed"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} -[{self.edge_type}]-> {self.target_id}"


class NodeTagRow(models.Model):
    """Derived: rebuilt from markdown."""

    node = models.ForeignKey(NodeRow, on_delete=models.CASCADE, related_name="tag_rows")
    tag = models.CharField(max_length=64, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["node", "tag"], name="node_tag_unique")]


class EmbeddingCacheRow(models.Model):
    """Cache: derived, keyed by embedded-text hash and model id, so unchanged text is never embedded twice."""

    text_hash = models.CharField(max_length=64)
    model_id = models.CharField(max_length=200)
    vector = models.BinaryField()
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["text_hash", "model_id"], name="embedding_cache_key")]


class PassageRow(models.Model):
    """Derived: one embedded passage of a long memory (memory/domain/chunking.py); ordinal 0 is the row's own
    vector in vec0, so passages start at 1. The vector is stored here (float32 bytes of the table's model)."""

    node = models.ForeignKey(NodeRow, on_delete=models.CASCADE, related_name="passages")
    ordinal = models.IntegerField()
    start = models.IntegerField()
    end = models.IntegerField()
    text_hash = models.CharField(max_length=64)
    vector = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["node", "ordinal"], name="passage_unique_ordinal")]


class IndexMetaRow(models.Model):
    """Derived: facts about the index itself (embedding model id and dimension, write sequence)."""

    key = models.CharField(max_length=100, unique=True)
    value = models.TextField()


class AuditRow(models.Model):
    """Ledger: not derived. Snapshots of nodes before destructive or corrective operations."""

    operation = models.CharField(max_length=30, db_index=True)
    node_uid = models.CharField(max_length=36, db_index=True)
    snapshot = models.TextField(default="")
    detail = models.JSONField(default=dict)
    performed_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-performed_at", "-id"]


class RetrievalEventRow(models.Model):
    """Ledger: not derived. One row per time a surface showed memories (recall, whisper, UI search).

    Surfacing is not use: these rows never reinforce a memory; confirmed use is recorded elsewhere.
    """

    surface = models.CharField(max_length=30, db_index=True)
    query_hash = models.CharField(max_length=64)
    node_uids = models.JSONField(default=list)
    scores = models.JSONField(default=list)
    session_id = models.CharField(max_length=200, null=True, blank=True, db_index=True)
    space = models.CharField(max_length=100, null=True, blank=True)
    created = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.surface} {self.created:%Y-%m-%d %H:%M} ({len(self.node_uids)} memories)"


class MergeHistoryRow(models.Model):
    """Ledger: not derived. One duplicate merge: both nodes' file bytes before it, and what undo must put back."""

    merge_id = models.CharField(max_length=36, unique=True)
    proposal_id = models.CharField(max_length=36, null=True, blank=True)
    kept_uid = models.CharField(max_length=36, db_index=True)
    removed_uid = models.CharField(max_length=36, db_index=True)
    kept_path = models.CharField(max_length=500)
    removed_path = models.CharField(max_length=500)
    kept_before = models.TextField()
    removed_before = models.TextField()
    kept_after_hash = models.CharField(max_length=64)
    neighbours = models.JSONField(default=list)
    reason = models.TextField(blank=True, default="")
    detail = models.JSONField(default=dict)
    merged_at = models.DateTimeField(db_index=True)
    undone_at = models.DateTimeField(null=True, blank=True)
    # True from just before the merge writes its first file until its index transaction commits: a row left
    # pending by a kill is settled from the files by the next sync (memory.services.merge_undo.merges_settle_pending).
    pending = models.BooleanField(default=False, db_index=True)

    class Meta:
        ordering = ["-merged_at", "-id"]

    def __str__(self) -> str:
        return f"merge {self.merge_id[:8]}: {self.removed_uid[:8]} -> {self.kept_uid[:8]}"


# ---------------------------------------------------------------------------
# Trust (docs/trust.md): citations, evidence, session state, verification
# ---------------------------------------------------------------------------

class NodeCitationRow(models.Model):
    """Derived: rebuilt from markdown. One row per evidence event a node cites (its source_event_ids)."""

    node = models.ForeignKey(NodeRow, on_delete=models.CASCADE, related_name="citation_rows")
    event_id = models.CharField(max_length=100, db_index=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["node", "event_id"], name="node_citation_unique")]


class EvidenceRow(models.Model):
    """Derived: rebuilt from the evidence files ($ORMAH_HOME/evidence/*.jsonl). One row per event."""

    uid = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=30, db_index=True)
    at = models.DateTimeField(db_index=True)
    session_id = models.CharField(max_length=200, null=True, blank=True, db_index=True)
    scope_type = models.CharField(max_length=20, default="global")
    scope_id = models.CharField(max_length=300, blank=True, default="")
    source = models.CharField(max_length=200, blank=True, default="")
    text = models.TextField(blank=True, default="")
    data = models.JSONField(default=dict)
    file_name = models.CharField(max_length=40)
    offset = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["at", "id"]

    def __str__(self) -> str:
        return f"{self.uid} {self.kind}"


class SessionStateRow(models.Model):
    """Derived: rebuilt from the evidence files (the latest session_state event of each session wins)."""

    session_id = models.CharField(max_length=200, unique=True)
    status = models.CharField(max_length=10, db_index=True)
    current_goal = models.TextField(blank=True, default="")
    summary = models.TextField(blank=True, default="")
    working_set = models.JSONField(default=list)
    scope_type = models.CharField(max_length=20, default="session")
    scope_id = models.CharField(max_length=300, blank=True, default="")
    source_event_ids = models.JSONField(default=list)
    event_id = models.CharField(max_length=100)
    updated = models.DateTimeField(db_index=True)

    def __str__(self) -> str:
        return f"{self.session_id} {self.status}"


class VerificationRow(models.Model):
    """Ledger: not derived. One check of a memory (failed, passed, stale, unknown, warning); the latest counts."""

    target_uid = models.CharField(max_length=100, db_index=True)
    status = models.CharField(max_length=10, db_index=True)
    checker = models.CharField(max_length=200, blank=True, default="")
    message = models.TextField(blank=True, default="")
    detail = models.JSONField(default=dict)
    evidence_event_id = models.CharField(max_length=100, null=True, blank=True)
    created = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.target_uid[:8]} {self.status}"
