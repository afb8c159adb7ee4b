"""The evidence ledger: append-only day files are the truth; rows, FTS and session states are rebuilt from them."""

from __future__ import annotations

import json
from datetime import timedelta

from memory.domain.evidence import EvidenceKind, decode_event, encode_event
from memory.domain.requests import NodeCreate
from memory.domain.trust_requests import EvidenceIn, SessionStateIn
from memory.models import EvidenceRow, SessionStateRow
from memory.search.evidence import evidence_search
from memory.services import evidence_record, evidence_sync, node_remember, session_state_set
from memory.services.evidence import evidence_log
from tests.trust.conftest import NOW


def say(text: str, kind: str = "user_message", session: str | None = "s1", **kw):
    return EvidenceIn(kind=kind, text=text, session_id=session, **kw)


def rows() -> list[tuple]:
    return list(EvidenceRow.objects.order_by("uid").values_list(
        "uid", "kind", "at", "session_id", "scope_type", "scope_id", "source", "text", "data", "file_name", "offset"))


def states() -> list[tuple]:
    return list(SessionStateRow.objects.order_by("session_id").values_list(
        "session_id", "status", "current_goal", "summary", "working_set", "source_event_ids", "event_id", "updated"))


def test_events_are_appended_as_one_json_line_each_in_the_day_file(home, db):
    first, second = evidence_record(items=[say("We deploy with make deploy"), say("ok", "assistant_message")],
                                    now=NOW)
    path = home / "evidence" / "2026-07-01.jsonl"
    lines = path.read_text().splitlines()
    assert [decode_event(line) for line in lines] == [first, second]
    assert lines[0] == encode_event(first)
    assert first.id.startswith("ev_20260701_") and first.scope.type == "session"


def test_the_next_day_goes_to_the_next_file(home, db):
    evidence_record(items=[say("one")], now=NOW)
    evidence_record(items=[say("two")], now=NOW + timedelta(days=1))
    assert sorted(p.name for p in (home / "evidence").glob("*.jsonl")) == ["2026-07-01.jsonl", "2026-07-02.jsonl"]


def test_a_torn_last_line_is_skipped_and_never_joined_to_the_next_event(home, db):
    evidence_record(items=[say("before the crash")], now=NOW)
    path = home / "evidence" / "2026-07-01.jsonl"
    with path.open("a") as handle:
        handle.write('{"id": "ev_20260701_00000000000000')  # the crash cut this line short
    after = evidence_record(items=[say("after the crash")], now=NOW)[0]
    report = evidence_sync(full=True)
    assert [m[2][:30] for m in report.malformed] == ["Unterminated string starting a"]
    assert sorted(EvidenceRow.objects.values_list("text", flat=True)) == ["after the crash", "before the crash"]
    assert path.read_text().splitlines()[-1] == encode_event(after)


def test_full_rebuild_from_the_files_equals_the_live_rows(home, db):
    evidence_record(items=[say("The billing service uses PostgreSQL 16"), say("noted", "assistant_message")],
                    now=NOW)
    session_state_set(session_id="s1", request=SessionStateIn(current_goal="Move billing to PG 17",
                                                              working_set=["billing/db.py"]), now=NOW)
    session_state_set(session_id="s1", request=SessionStateIn(status="blocked", summary="waiting on a DBA"),
                      now=NOW + timedelta(minutes=5))
    node_remember(request=NodeCreate(content="Billing runs PostgreSQL 16"), session_id="s1",
                  now=NOW + timedelta(days=1), auto_link=False)
    live_rows, live_states = rows(), states()
    evidence_sync(full=True)
    assert (rows(), states()) == (live_rows, live_states)
    assert len(live_rows) == 5 and live_states[0][1:4] == ("blocked", "", "waiting on a DBA")


def test_sync_indexes_events_appended_by_another_writer(home, db):
    evidence_record(items=[say("first")], now=NOW)
    other = evidence_log().path_for_day("2026-07-01")
    with other.open("a") as handle:
        handle.write(json.dumps({"id": "ev_20260701_aaaaaaaaaaaaaaaa", "kind": "tool_call", "at": "2026-07-01T13:00:00Z",
                                 "text": "pytest -q", "scope": {"type": "global", "id": "global"}}) + "\n")
    report = evidence_sync()
    assert (report.indexed, EvidenceRow.objects.get(uid="ev_20260701_aaaaaaaaaaaaaaaa").kind) == (1, "tool_call")


def test_evidence_is_searchable_by_full_text(home, db):
    evidence_record(items=[say("The staging database password rotates every Friday"),
                           say("Lunch is at noon", session="s2"),
                           say("pytest -q passed", kind="tool_result")], now=NOW)
    assert [EvidenceRow.objects.get(uid=h.uid).text for h in evidence_search("database rotates")] == [
        "The staging database password rotates every Friday"]
    assert evidence_search("lunch", session_id="s1") == []
    assert [h.uid for h in evidence_search("pytest", kinds=("tool_result",))] != []


def test_remember_writes_an_explicit_memory_event_the_node_cites(home, db):
    node = node_remember(request=NodeCreate(content="Use ruff for linting", space="shop"), session_id="s9",
                         now=NOW, auto_link=False).node
    event = EvidenceRow.objects.get(uid=node.source_event_ids[0])
    assert (event.kind, event.text, event.session_id, event.data) == (
        EvidenceKind.EXPLICIT_MEMORY, "Use ruff for linting", "s9", {"type": "fact", "space": "shop"})
    assert f"- {event.uid}\n" in (home / "memory" / "nodes").joinpath(
        next(p.name for p in (home / "memory" / "nodes").iterdir() if node.short_id in p.name)).read_text()


def test_session_state_is_projected_from_evidence_and_the_latest_event_wins(home, db):
    session_state_set(session_id="s1", request=SessionStateIn(current_goal="Fix flaky test"), now=NOW)
    state = session_state_set(session_id="s1", request=SessionStateIn(status="complete", summary="fixed"),
                              now=NOW + timedelta(hours=1))
    assert (state.status, state.summary, len(state.source_event_ids)) == ("complete", "fixed", 1)
    assert EvidenceRow.objects.filter(session_id="s1", kind="system_event").count() == 2


def test_ormah_rebuild_rebuilds_the_evidence_rows_too(home, db):
    from django.core.management import call_command
    from io import StringIO

    evidence_record(items=[say("kept in the file")], now=NOW)
    EvidenceRow.objects.all().delete()
    out = StringIO()
    call_command("rebuild", "--json", stdout=out)
    assert json.loads(out.getvalue())["evidence"]["indexed"] == 1
    assert list(EvidenceRow.objects.values_list("text", flat=True)) == ["kept in the file"]


def test_an_event_holding_a_nul_anywhere_is_refused_before_the_ledger():
    import pytest
    from pydantic import ValidationError

    for bad in ({"text": "a\x00b"}, {"data": {"k": "a\x00b"}}, {"data": {"k\x00": 1}},
                {"data": {"k": [1, {"deep": ["x\x00"]}]}}):
        with pytest.raises(ValidationError, match="NUL"):
            EvidenceIn(kind=EvidenceKind.USER_MESSAGE, **bad)
    assert EvidenceIn(kind=EvidenceKind.USER_MESSAGE, text="a\\x00b", data={"k": "\\u0000"}).text == "a\\x00b"
