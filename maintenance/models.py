"""Ledgers of the maintenance app: job runs, job state (watermarks, pause), proposals, agent maintenance sessions."""

from __future__ import annotations

from django.db import models

from maintenance.detectors.facts import ProposalKind


class JobRunRow(models.Model):
    """Ledger: not derived. One run of one job: when, how it ended, what it counted."""

    job = models.CharField(max_length=40, db_index=True)
    trigger = models.CharField(max_length=20, default="schedule")
    status = models.CharField(max_length=12, default="running")
    started_at = models.DateTimeField(db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    counts = models.JSONField(default=dict)
    error = models.TextField(blank=True, default="")
    # the process that runs it (maintenance.processes): a row left "running" by a killed one is closed as interrupted
    host = models.CharField(max_length=255, blank=True, default="")
    pid = models.IntegerField(null=True, blank=True)
    proc_start = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]

    def __str__(self) -> str:
        return f"{self.job} {self.status} @ {self.started_at:%Y-%m-%d %H:%M}"


class JobStateRow(models.Model):
    """Ledger: not derived. Per job: the indexed_seq watermark of its incremental work, and whether it is paused."""

    job = models.CharField(max_length=40, unique=True)
    watermark = models.BigIntegerField(default=0)
    paused = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.job} @ {self.watermark}"


class NodeSeenRow(models.Model):
    """Ledger: not derived. The embedded text (hash) of a node a job last examined; unchanged text is not redone."""

    job = models.CharField(max_length=40)
    node_uid = models.CharField(max_length=36, db_index=True)
    embed_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["job", "node_uid"], name="node_seen_unique")]


class ProposalRow(models.Model):
    """Ledger: not derived. A change offered for review: pending until approved, rejected or expired."""

    KINDS = tuple(ProposalKind)
    STATUSES = ("pending", "approved", "rejected", "expired")

    proposal_id = models.CharField(max_length=36, unique=True)
    kind = models.CharField(max_length=20, db_index=True)
    status = models.CharField(max_length=10, default="pending", db_index=True)
    key = models.CharField(max_length=400, db_index=True)
    node_uids = models.JSONField(default=list)
    action = models.TextField()
    reason = models.TextField(blank=True, default="")
    score = models.FloatField(default=0.0)
    priority = models.FloatField(default=0.0, db_index=True)
    payload = models.JSONField(default=dict)
    basis = models.JSONField(default=dict)  # node uid -> content hash of the memory as the detector saw it
    group_key = models.CharField(max_length=80, blank=True, default="", db_index=True)  # proposals of one cause
    group_label = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(db_index=True)
    expires_at = models.DateTimeField(db_index=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.CharField(max_length=100, blank=True, default="")
    result = models.JSONField(default=dict)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.kind} {self.proposal_id[:8]} ({self.status})"


class MaintenanceSessionRow(models.Model):
    """Ledger: not derived. One two-phase agent maintenance run: the batches offered and what was applied."""

    session_id = models.CharField(max_length=36, unique=True)
    status = models.CharField(max_length=20, db_index=True)
    batches = models.JSONField(default=dict)
    node_hashes = models.JSONField(default=dict)
    apply_summary = models.JSONField(default=dict)
    created_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"maintenance {self.session_id[:8]} ({self.status})"
