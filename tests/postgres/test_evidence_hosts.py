"""Evidence rows on a shared database: each host appends to its own day files, and its syncs (incremental, after a
file shrank, and full as `ormah rebuild` runs) read and delete only its own rows (memory/evidence/index.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from memory.domain.trust_requests import EvidenceIn, SessionStateIn
from memory.models import EvidenceRow, SessionStateRow
from memory.services import evidence_record, evidence_sync, session_state_set
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]
NOW = datetime(2026, 7, 1, 12, 0, tzinfo=timezone.utc)


def _move_to(settings, home: Path) -> None:
    """Make this process another host: its own ORMAH_HOME on the same database."""
    settings.ORMAH = {**settings.ORMAH, "HOME": home, "MEMORY_DIR": home / "memory", "TOKEN_FILE": home / "token"}


def _record(prefix: str, count: int) -> set[str]:
    items = [EvidenceIn(kind="user_message", text=f"{prefix} said thing number {i}", session_id=f"s-{prefix}")
             for i in range(count)]
    return {e.id for e in evidence_record(items=items, now=NOW)}


def _uids() -> set[str]:
    return set(EvidenceRow.objects.values_list("uid", flat=True))


def test_two_hosts_appending_to_the_same_day_keep_each_others_rows(home, settings, tmp_path):
    host_a, host_b = home, tmp_path / "host-b"
    mine = _record("A", 5)  # host A's day file is the longer one

    _move_to(settings, host_b)
    theirs = _record("B", 1)  # before the fix: B's shorter file read as rewritten, A's rows deleted
    session_state_set(session_id="s-B", request=SessionStateIn(current_goal="ship the billing fix"), now=NOW)
    theirs |= set(SessionStateRow.objects.values_list("event_id", flat=True))
    assert _uids() == mine | theirs

    _move_to(settings, host_a)
    mine |= _record("A", 2)
    assert evidence_sync().malformed == []  # before the fix: A read from B's offset, inside a line
    assert _uids() == mine | theirs

    report = evidence_sync(full=True)  # `ormah rebuild` on host A
    assert (report.malformed, report.indexed) == ([], 7)
    assert _uids() == mine | theirs
    assert SessionStateRow.objects.get(session_id="s-B").current_goal == "ship the billing fix"

    _move_to(settings, host_b)
    assert evidence_sync(full=True).malformed == []
    assert evidence_sync().malformed == []
    assert _uids() == mine | theirs
    assert EvidenceRow.objects.count() == len(mine | theirs) == 9


def test_a_file_shrunk_by_hand_drops_only_its_own_hosts_rows(home, settings, tmp_path):
    mine = _record("A", 3)
    _move_to(settings, tmp_path / "host-b")
    _record("B", 3)
    day_file = tmp_path / "host-b" / "evidence" / "2026-07-01.jsonl"
    first_line = day_file.read_text().splitlines(keepends=True)[0]
    day_file.write_text(first_line)  # B's file rewritten by hand: one event left

    assert evidence_sync().malformed == []
    kept = EvidenceRow.objects.exclude(uid__in=mine)
    assert _uids() >= mine and kept.count() == 1 and kept.get().uid in first_line
