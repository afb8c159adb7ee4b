"""Whisper's tables. None is derived from markdown: they are ledgers and per-session state that a rebuild keeps."""

from __future__ import annotations

from django.db import models


class WhisperDecisionRow(models.Model):
    """Ledger: not derived. One row per whisper call: what was asked, what was decided and why."""

    created = models.DateTimeField(db_index=True)
    session_id = models.CharField(max_length=200, null=True, blank=True, db_index=True)
    space = models.CharField(max_length=100, null=True, blank=True)
    prompt = models.TextField(blank=True, default="")
    prompt_hash = models.CharField(max_length=64, blank=True, default="")
    prompt_vec = models.BinaryField(null=True, blank=True)
    intent = models.CharField(max_length=100, blank=True, default="")
    decision = models.CharField(max_length=40, db_index=True)
    matched_pattern = models.CharField(max_length=200, null=True, blank=True)
    node_ids = models.JSONField(default=list, blank=True)
    estimated_tokens = models.IntegerField(default=0)
    budget_tokens = models.IntegerField(default=0)
    gate = models.FloatField(null=True, blank=True)
    reranker = models.CharField(max_length=200, blank=True, default="")
    elapsed_ms = models.FloatField(null=True, blank=True)
    delivered = models.BooleanField(null=True, blank=True)  # None: unknown; True: the hook confirmed delivery

    class Meta:
        ordering = ["-created", "-id"]
        # (session_id, decision) covers the session's prompt count that every call reads (selectors.ledger_position)
        indexes = [models.Index(fields=["session_id", "created"], name="whisper_decision_session"),
                   models.Index(fields=["session_id", "decision"], name="whisper_decision_session_kind")]

    def __str__(self) -> str:
        return f"#{self.pk} {self.decision}"


class WhisperCandidateRow(models.Model):
    """Ledger: not derived. One row per candidate of a decision: where it stopped and with which scores."""

    decision = models.ForeignKey(WhisperDecisionRow, on_delete=models.CASCADE, related_name="candidates")
    node_uid = models.CharField(max_length=36, db_index=True)
    short_id = models.CharField(max_length=8)
    title = models.CharField(max_length=300, blank=True, default="")
    source = models.CharField(max_length=20, default="search")
    retrieval_rank = models.IntegerField(null=True, blank=True)
    retrieval_score = models.FloatField(default=0.0)
    raw_cosine = models.FloatField(null=True, blank=True)
    ce_raw = models.FloatField(null=True, blank=True)
    ce_abs = models.FloatField(null=True, blank=True)
    affinity = models.FloatField(default=0.0)
    gate_score = models.FloatField(null=True, blank=True)
    gate_threshold = models.FloatField(null=True, blank=True)
    stage = models.CharField(max_length=40)
    final_rank = models.IntegerField(null=True, blank=True)
    injected = models.BooleanField(default=False)
    use_confirmed = models.BooleanField(default=False)  # positive feedback already counted as use (at most once)

    class Meta:
        ordering = ["decision_id", "final_rank", "retrieval_rank", "id"]

    def __str__(self) -> str:
        return f"{self.short_id} {self.stage}"


class AffinityRow(models.Model):
    """Ledger: not derived. One feedback signal for a memory in a prompt context (drives the affinity boost)."""

    node_uid = models.CharField(max_length=36, db_index=True)
    prompt_vec = models.BinaryField()
    signal = models.SmallIntegerField()
    source = models.CharField(max_length=20)
    created = models.DateTimeField(db_index=True)
    decision = models.ForeignKey(WhisperDecisionRow, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="feedback")

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.node_uid[:8]} {self.signal:+d} {self.source}"


class SessionPromptRow(models.Model):
    """Ledger: not derived. The session buffer: the last prompts of a session (shared by every worker)."""

    session_id = models.CharField(max_length=200)
    prompt = models.TextField()
    vector = models.BinaryField(null=True, blank=True)
    created = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["created", "id"]
        indexes = [models.Index(fields=["session_id", "created"], name="whisper_buffer_session")]


class TranscriptCursorRow(models.Model):
    """Ledger: not derived. How far transcript capture has read one transcript file (a byte offset)."""

    path = models.CharField(max_length=1000, unique=True)
    session_id = models.CharField(max_length=200, blank=True, default="")
    offset = models.BigIntegerField(default=0)
    stored = models.IntegerField(default=0)
    updated = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.path} @{self.offset}"
