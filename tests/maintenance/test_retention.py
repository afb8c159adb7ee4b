"""Ledger retention: the audit log per operation and by row count, runs, sessions, decided proposals, old merges."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from maintenance.models import JobRunRow
from maintenance.runner import job_execute
from memory.domain.trust_requests import VerificationIn
from memory.models import AuditRow, RetrievalEventRow, VerificationRow
from memory.services import audit_prune, verification_record
from memory.services.surfacing import query_hash, surfacing_log

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def audit(op: str, days_ago: float, uid: str = "n") -> None:
    AuditRow.objects.create(operation=op, node_uid=uid, performed_at=NOW - timedelta(days=days_ago))


def test_audit_retention_per_operation_then_by_count(db):
    for op, age in [("update", 200), ("update", 10), ("importance", 8), ("importance", 1), ("delete", 5),
                    ("delete", 3), ("delete", 2)]:
        audit(op, age)
    deleted = audit_prune(now=NOW, default_days=180, max_rows=3, days_by_operation={"importance": 7})
    assert deleted == 4  # the 200-day update, the 8-day importance row, then the two oldest by count
    assert sorted(AuditRow.objects.values_list("operation", flat=True)) == ["delete", "delete", "importance"]


def test_decay_manager_applies_ledger_retention(no_llm, home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_AUDIT_RETENTION_DAYS": 30, "MAINTENANCE_LEDGER_RETENTION_DAYS": 7}
    audit("update", 400)
    JobRunRow.objects.create(job="auto_cluster", started_at=NOW - timedelta(days=30), status="ok")
    outcome = job_execute("decay_manager", now=NOW)
    assert (outcome.counts["audit_pruned"], outcome.counts["ledger_pruned"]) == (1, 1)
    assert list(JobRunRow.objects.values_list("job", flat=True)) == ["decay_manager"]


def test_decay_manager_prunes_the_surfacing_and_verification_ledgers(no_llm, remember, settings):
    settings.ORMAH = {**settings.ORMAH, "MAINTENANCE_SURFACING_RETENTION_DAYS": 90,
                      "MAINTENANCE_VERIFICATION_RETENTION_DAYS": 180}
    node = remember("The billing service runs on port 8080")
    surfacing_log(surface="recall", query="old", hits=[], now=NOW - timedelta(days=91))
    surfacing_log(surface="recall", query="new", hits=[], now=NOW - timedelta(days=89))
    for days_ago, status in [(400, "failed"), (200, "passed"), (10, "stale")]:
        verification_record(request=VerificationIn(target_id=node.id, status=status), now=NOW - timedelta(days=days_ago))
    lone = remember("Robin drinks green tea every morning")
    verification_record(request=VerificationIn(target_id=lone.id, status="passed"), now=NOW - timedelta(days=300))
    outcome = job_execute("decay_manager", now=NOW)
    assert (outcome.counts["surfacing_pruned"], outcome.counts["verification_pruned"]) == (1, 2)
    assert list(RetrievalEventRow.objects.values_list("query_hash", flat=True)) == [query_hash("new")]
    # a memory's latest check is kept however old it is
    assert sorted(VerificationRow.objects.values_list("target_uid", "status")) == sorted(
        [(node.id, "stale"), (lone.id, "passed")])
