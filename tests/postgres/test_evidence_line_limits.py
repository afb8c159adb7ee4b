"""An evidence day-file line whose id, session, scope id or source is longer than the index's columns (session 22,
review8; runs on SQLite and PostgreSQL). Such a line (another tool's, or a hand edit) parsed, so on PostgreSQL the
varchar columns refused the row and every evidence sync and `ormah rebuild` failed with a traceback; SQLite kept
it. It is a malformed line now, reported and skipped, and the other events are indexed."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from memory.domain.trust_requests import EvidenceIn
from memory.models import EvidenceRow
from memory.services import evidence_record, evidence_sync

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=timezone.utc)


def _line(**fields) -> str:
    event = {"at": "2026-11-29T12:00:01.000000Z", "id": "ev_20261129_00000000000000aa", "kind": "user_message",
             "scope": {"id": "global", "type": "global"}, "source": "tool:other", "text": "from another tool",
             "data": {}, **fields}
    return json.dumps(event) + "\n"


@pytest.mark.parametrize(("fields", "reason"), [
    ({"id": "ev_" + "x" * 120}, "an evidence event's id is longer than 100 characters"),
    ({"session_id": "s" * 201}, "an evidence event's session_id is longer than 200 characters"),
    ({"scope": {"type": "project", "id": "p" * 301}}, "an evidence event's scope id is longer than 300 characters"),
    ({"source": "tool:" + "o" * 200}, "an evidence event's source is longer than 200 characters"),
])
@pytest.mark.django_db(transaction=True)
def test_an_over_long_field_makes_the_line_malformed_and_the_sync_goes_on(home, fields, reason):
    [kept] = evidence_record(items=[EvidenceIn(kind="user_message", text="we deploy on Tuesdays")], now=NOW)
    with (home / "evidence" / "2026-11-29.jsonl").open("a") as handle:
        handle.write(_line(**fields))

    report = evidence_sync(full=True)

    assert [m[2] for m in report.malformed] == [reason]
    assert list(EvidenceRow.objects.values_list("uid", flat=True)) == [kept.id]



@pytest.mark.parametrize("fields", [{"text": "lone SURROGATE here"}, {"data": {"k": "SURROGATE"}}])
@pytest.mark.django_db(transaction=True)
def test_an_escaped_lone_surrogate_makes_the_line_malformed_and_the_sync_goes_on(home, fields):
    # json.loads turns the escape into a lone surrogate, which neither psycopg nor sqlite3 can encode: the rebuild
    # ended in a UnicodeEncodeError on both engines
    [kept] = evidence_record(items=[EvidenceIn(kind="user_message", text="we deploy on Tuesdays")], now=NOW)
    with (home / "evidence" / "2026-11-29.jsonl").open("a") as handle:
        handle.write(_line(**fields).replace("SURROGATE", "\\udfff"))

    report = evidence_sync(full=True)

    assert [m[2] for m in report.malformed] == ["an evidence event holds a lone surrogate (an escape like \\ud800 alone)"]
    assert list(EvidenceRow.objects.values_list("uid", flat=True)) == [kept.id]
