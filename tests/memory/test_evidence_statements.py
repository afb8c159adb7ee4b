"""The statements a remember's evidence event is indexed with (memory/evidence/index.py): its day file's offset read,
the known-ids read and the offset's update are plain statements (issue 13: the ORM's query building cost ~1 ms of
every remember), and they give the ORM's answers."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import timedelta

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.requests import NodeCreate
from memory.domain.trust_requests import EvidenceIn
from memory.evidence import index as evidence_index
from memory.evidence.index import EvidenceSyncReport
from memory.models import EvidenceRow, IndexMetaRow
from memory.services import evidence_record, evidence_sync, node_remember
from memory.services.evidence import evidence_log
from tests.trust.conftest import NOW

# the ORM's statements name every column with its table ("memory_evidencerow"."uid"); the plain ones do not
ORM_COLUMNS = re.compile(r'"memory_(evidencerow|indexmetarow)"\."')


def _offsets() -> dict[str, str]:
    return dict(IndexMetaRow.objects.filter(key__startswith="evidence:").values_list("key", "value"))


def _prefix() -> str:
    """"" on SQLite, "<host id>/" on PostgreSQL, where the day files' names are qualified by the home's host."""
    return evidence_index.host_prefix(evidence_log())


def _sizes(home) -> dict[str, str]:
    return {f"evidence:{_prefix()}{p.name}": str(p.stat().st_size) for p in (home / "evidence").glob("*.jsonl")}


def test_a_remember_indexes_its_event_with_three_plain_statements(home, db):
    node_remember(request=NodeCreate(content="Billing runs PostgreSQL 16"), session_id="s1", now=NOW,
                  auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        node_remember(request=NodeCreate(content="Invoices go to the finance share nightly"),
                                session_id="s1", now=NOW, auto_link=False)
    sqls = [q["sql"] for q in ctx.captured_queries]
    ledger = [s for s in sqls if re.search(r"memory_evidencerow|evidence:", s, re.IGNORECASE)
              or re.search(r"FROM \"?memory_indexmetarow\"? WHERE key IN", s)]
    assert [s for s in ledger if ORM_COLUMNS.search(s)] == []
    assert sum(bool(re.match(r"SELECT key, value FROM \"?memory_indexmetarow", s)) for s in sqls) == 1
    assert sum(bool(re.match(r"SELECT uid FROM \"?memory_evidencerow", s)) for s in sqls) == 1
    assert sum(bool(re.match(r"UPDATE \"?memory_indexmetarow\"? SET value = \S+ WHERE key = 'evidence:", s))
               for s in sqls) == 1
    row = EvidenceRow.objects.get(text__contains="finance share")
    assert (row.kind, row.session_id, row.file_name) == ("explicit_memory", "s1", f"{_prefix()}2026-07-01.jsonl")
    assert _offsets() == _sizes(home)


def test_a_new_day_file_gets_its_offset_and_a_shrunk_one_is_read_again(home, db):
    evidence_record(items=[EvidenceIn(kind="user_message", text="one", session_id="s1")], now=NOW)
    evidence_record(items=[EvidenceIn(kind="user_message", text="two", session_id="s1")],
                    now=NOW + timedelta(days=1))
    assert set(_offsets()) == {f"evidence:{_prefix()}2026-07-01.jsonl", f"evidence:{_prefix()}2026-07-02.jsonl"}
    assert _offsets() == _sizes(home)
    day1 = home / "evidence" / "2026-07-01.jsonl"
    evidence_record(items=[EvidenceIn(kind="user_message", text="three", session_id="s1")], now=NOW)
    first_line = day1.read_text().splitlines(keepends=True)[0]
    day1.write_text(first_line)  # rewritten by hand, shorter than its recorded offset
    evidence_index.sync(evidence_log(), days=["2026-07-01"])
    assert sorted(EvidenceRow.objects.values_list("text", flat=True)) == ["one", "two"]
    assert _offsets() == _sizes(home)


def test_known_ids_over_several_chunks_are_skipped_as_the_orm_found_them(home, db):
    n = evidence_index.CHUNK * 2 + 7
    events = evidence_record(items=[EvidenceIn(kind="user_message", text=f"line {i}", session_id="s1")
                                    for i in range(n)], now=NOW)
    assert EvidenceRow.objects.count() == n
    log = evidence_log()
    reads, bad, _ = log.read_from(home / "evidence" / "2026-07-01.jsonl", 0)
    assert not bad and len(reads) == n
    reads = [replace(r, file_name=_prefix() + r.file_name) for r in reads]  # as sync qualifies them
    report = EvidenceSyncReport()
    assert evidence_index.index_events(reads, report) == 0
    assert report.duplicates == [e.id for e in events]
    EvidenceRow.objects.filter(uid__in=[e.id for e in events[::3]]).delete()
    report = EvidenceSyncReport()
    assert evidence_index.index_events(reads, report) == len(events[::3])
    assert len(report.duplicates) == n - len(events[::3])
    assert EvidenceRow.objects.count() == n
    assert evidence_sync(full=True).indexed == n and _offsets() == _sizes(home)
