"""What whisper reads of its ledger (whisper/selectors.py) and what the session buffer holds (whisper/session.py):
the samples, counts and ids returned on a small ledger of several sessions, with times on both sides of each bound
and ties in time. Ledger rows come from factories (they are not derived from markdown). Runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from whisper import selectors
from whisper.conf import WhisperConf
from whisper.models import AffinityRow, SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.session import buffer_append, buffer_read

from .conftest import NOW, unit

pytestmark = pytest.mark.django_db
CONF = WhisperConf()


def decision(session, outcome="injected", minutes_ago=0, vec=None, injected=()):
    """A decision row of `session` with a candidate row per node (the ones in `injected` injected)."""
    row = WhisperDecisionRow.objects.create(created=NOW - timedelta(minutes=minutes_ago), session_id=session,
                                            decision=outcome, prompt="p",
                                            prompt_vec=None if vec is None else vec.tobytes())
    WhisperCandidateRow.objects.bulk_create([WhisperCandidateRow(decision=row, node_uid=uid, short_id=uid[:8],
                                                                 stage="gate", injected=True) for uid in injected])
    WhisperCandidateRow.objects.create(decision=row, node_uid="never-injected", short_id="never", stage="gate",
                                       injected=False)
    return row


def feedback(uid, signal, minutes_ago, source="explicit", vec=None):
    return AffinityRow.objects.create(node_uid=uid, signal=signal, source=source,
                                      prompt_vec=(unit(1.0) if vec is None else vec).tobytes(),
                                      created=NOW - timedelta(minutes=minutes_ago))


# ---- feedback samples --------------------------------------------------------------------------------------------

def test_feedback_samples_by_node_newest_first_ties_by_id():
    feedback("a", 1, 30)
    tie_first = feedback("a", -1, 10, source="implicit")
    tie_second = feedback("a", 1, 10)
    feedback("b", -1, 5, vec=unit(0.0, 1.0))
    feedback("c", 1, 1)
    got = selectors.feedback_samples(node_uids=["a", "b", "a", "absent"])
    assert sorted(got) == ["a", "b"]
    assert [(s.signal, s.source, s.at) for s in got["a"]] == [
        (tie_second.signal, "explicit", NOW - timedelta(minutes=10)),
        (tie_first.signal, "implicit", NOW - timedelta(minutes=10)),
        (1, "explicit", NOW - timedelta(minutes=30))]
    assert got["b"][0].prompt_vec.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_no_node_ids_no_feedback_read():
    feedback("a", 1, 1)
    assert selectors.feedback_samples(node_uids=[]) == {}


# ---- served topics and memories ------------------------------------------------------------------------------------

def test_served_node_ids_of_a_session_since_a_time_inclusive():
    decision("s1", minutes_ago=20, injected=["old"])
    decision("s1", minutes_ago=10, injected=["at-bound", "twice"])
    decision("s1", minutes_ago=1, injected=["new", "twice"])
    decision("s1", outcome="silent:gate", minutes_ago=1)
    decision("s2", minutes_ago=1, injected=["theirs"])
    since = NOW - timedelta(minutes=10)
    assert selectors.served_node_ids(session_id="s1", since=since) == frozenset({"at-bound", "twice", "new"})
    assert selectors.served_node_ids(session_id="s2", since=since) == frozenset({"theirs"})
    assert selectors.served_node_ids(session_id="s3", since=since) == frozenset()
    assert selectors.served_node_ids(session_id=None, since=since) == frozenset()


def test_served_node_ids_sends_no_sort():
    """A set of ids: the candidate model's default ordering sorted every injected row of the session for nothing."""
    decision("s1", injected=("a",))
    with CaptureQueriesContext(connection) as ctx:
        assert selectors.served_node_ids(session_id="s1", since=NOW - timedelta(minutes=5)) == frozenset({"a"})
    (query,) = ctx.captured_queries
    assert "ORDER BY" not in query["sql"]


# ---- ids and counts ------------------------------------------------------------------------------------------------

def test_next_decision_id_is_the_newest_plus_one():
    assert selectors.next_decision_id() == 1
    rows = [decision("s1"), decision("s2"), decision(None)]
    assert selectors.next_decision_id() == max(r.id for r in rows) + 1


def test_session_prompt_count_leaves_out_synthetic_prompts():
    for outcome in ("injected", "silent:gate", "silent:synthetic", "silent:acknowledgement", "silent:synthetic"):
        decision("s1", outcome=outcome)
    decision("s2")
    assert [selectors.session_prompt_count(session_id=s) for s in ("s1", "s2", "s3", None)] == [3, 1, 0, 0]


def test_ledger_position_is_the_next_id_and_the_sessions_count():
    assert selectors.ledger_position(session_id="s1") == (1, 0)
    for outcome in ("injected", "silent:gate", "silent:synthetic", "silent:acknowledgement", "silent:synthetic"):
        decision("s1", outcome=outcome)
    decision("s2")
    expected = selectors.next_decision_id()
    assert [selectors.ledger_position(session_id=s) for s in ("s1", "s2", "s3", None)] == \
        [(expected, 3), (expected, 1), (expected, 0), (expected, 0)]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's query plan")
def test_the_session_count_reads_an_index_alone():
    """The count every call reads grows with its session: it reads the (session_id, decision) index, not the rows
    (without it SQLite looked up every row of the session for its decision)."""
    decision("s1")
    with CaptureQueriesContext(connection) as ctx:
        assert selectors.ledger_position(session_id="s1") == (selectors.next_decision_id(), 1)
    (count,) = [q["sql"] for q in ctx.captured_queries if "COUNT" in q["sql"]]
    with connection.cursor() as cur:
        cur.execute("EXPLAIN QUERY PLAN " + count)
        plan = [row[-1] for row in cur.fetchall()]
    assert "whisper_decision_session_kind" in " ".join(plan)  # the index, not SQLite's wording of the plan


# ---- the session buffer ------------------------------------------------------------------------------------------

def append(session, prompt, seconds, vector=None):
    buffer_append(session_id=session, prompt=prompt, vector=vector, now=NOW + timedelta(seconds=seconds), conf=CONF)


def held(session):
    return list(SessionPromptRow.objects.filter(session_id=session).order_by("created", "id")
                .values_list("prompt", flat=True))


def test_the_buffer_keeps_each_sessions_newest_five_ties_by_insertion():
    for i in range(7):
        append("a", f"a{i}", 30 * (i // 2))  # two prompts at each instant
        append("b", f"b{i}", 30 * (i // 2))
    assert held("a") == ["a2", "a3", "a4", "a5", "a6"]
    assert held("b") == ["b2", "b3", "b4", "b5", "b6"]
    recent = buffer_read(session_id="a", now=NOW + timedelta(minutes=2), conf=CONF)
    assert [(r.prompt, r.at) for r in recent] == [
        ("a2", NOW + timedelta(seconds=30)), ("a3", NOW + timedelta(seconds=30)), ("a4", NOW + timedelta(minutes=1)),
        ("a5", NOW + timedelta(minutes=1)), ("a6", NOW + timedelta(seconds=90))]


def test_an_append_prunes_every_sessions_rows_older_than_the_gap():
    gap = CONF.session_gap_minutes * 60
    append("a", "a-old", 0)
    append("b", "b-at-gap", 1)
    append("b", "b-new", 2)
    append("c", "c-now", gap + 1)  # 'a-old' is older than the gap now; 'b-at-gap' is exactly at it
    assert (held("a"), held("b"), held("c")) == ([], ["b-at-gap", "b-new"], ["c-now"])


def test_the_read_keeps_the_window_and_the_vectors():
    append("a", "before-gap", -CONF.session_gap_minutes * 60 - 1)
    append("a", "with-vector", 0, vector=unit(0.0, 1.0))
    append("a", "later", 60)
    recent = buffer_read(session_id="a", now=NOW + timedelta(seconds=30), conf=CONF)
    assert [r.prompt for r in recent] == ["with-vector"]  # 'later' is after now, 'before-gap' pruned or outside
    assert recent[0].vector.tolist() == [0.0, 1.0, 0.0, 0.0]
    assert buffer_read(session_id="a", now=NOW + timedelta(minutes=CONF.session_gap_minutes, seconds=61),
                       conf=CONF) is None


def test_the_append_joins_the_callers_transaction():
    append("a", "kept", 0)
    with pytest.raises(RuntimeError), transaction.atomic():
        append("a", "rolled back", 1)
        raise RuntimeError("the caller's transaction fails after the append")
    assert held("a") == ["kept"]


def test_a_long_prompt_is_cut_and_no_session_buffers_nothing():
    append("a", "x" * 3000, 0, vector=np.ones(4, dtype=np.float32))
    append(None, "nobody's", 0)
    assert [len(p) for p in held("a")] == [2000]
    assert SessionPromptRow.objects.count() == 1


def test_plain_reads_give_the_orms_answers_with_microseconds_and_whole_seconds():
    """The ledger reads are plain SQL (whisper/selectors._rows): a time stored without microseconds (SQLite's text
    '... 12:00:00') sorts and compares as the time it holds, as through the ORM."""
    whole = feedback("a", 1, 10)
    AffinityRow.objects.filter(id=whole.id).update(created=NOW - timedelta(minutes=10))
    later = feedback("a", -1, 10)
    AffinityRow.objects.filter(id=later.id).update(created=NOW - timedelta(minutes=10) + timedelta(microseconds=5))
    got = selectors.feedback_samples(node_uids=["a"])["a"]
    expected = list(AffinityRow.objects.filter(node_uid="a").order_by("-created", "-id")
                    .values_list("signal", "created"))
    assert [(s.signal, s.at) for s in got] == expected == [(-1, NOW - timedelta(minutes=10, microseconds=-5)),
                                                           (1, NOW - timedelta(minutes=10))]
    row = decision("s1", minutes_ago=0, injected=["exact"])
    assert selectors.served_node_ids(session_id="s1", since=row.created) == frozenset({"exact"})
    assert selectors.served_node_ids(session_id="s1", since=row.created + timedelta(microseconds=1)) == frozenset()


def test_decision_get_is_the_orms_row_field_for_field():
    row = decision("s1", vec=unit(1.0), injected=["a"])
    WhisperDecisionRow.objects.filter(id=row.id).update(node_ids=["a", "b"], delivered=True, gate=0.25)
    orm = WhisperDecisionRow.objects.filter(id=row.id).first()
    got = selectors.decision_get(whisper_log_id=row.id)
    fields = [f.attname for f in WhisperDecisionRow._meta.concrete_fields]
    assert [getattr(got, f) for f in fields] == [getattr(orm, f) for f in fields]
    assert got.node_ids == ["a", "b"] and got.delivered is True and got.created == NOW
    assert selectors.decision_get(whisper_log_id=row.id + 1) is None


def test_candidate_for_feedback_is_the_orms_row_with_its_decision():
    def orm(uid, log_id):
        qs = WhisperCandidateRow.objects.filter(node_uid=uid).select_related("decision")
        if log_id is not None:
            return qs.filter(decision_id=log_id).first()
        return qs.filter(injected=True).order_by("-decision__created", "-id").first()

    old = decision("s1", minutes_ago=20, injected=["a"])
    tie_first = decision("s1", minutes_ago=5, injected=["a"])
    tie_second = decision("s2", minutes_ago=5, injected=["a", "b"])
    decision("s1", minutes_ago=1, injected=["b"])
    for rank in (3, None, 1):  # the same memory twice more in one decision: the model's ordering picks
        WhisperCandidateRow.objects.create(decision=old, node_uid="a", short_id="a", stage="gate", final_rank=rank)
    for uid, log_id in [("a", old.id), ("a", tie_first.id), ("a", None), ("b", None), ("b", old.id),
                        ("never-injected", None), ("never-injected", tie_second.id), ("absent", None)]:
        got, want = selectors.candidate_for_feedback(node_uid=uid, whisper_log_id=log_id), orm(uid, log_id)
        assert (got and got.id) == (want and want.id), (uid, log_id)
        if want is not None:
            with CaptureQueriesContext(connection) as ctx:
                assert got.decision.id == want.decision.id and got.decision.prompt == want.decision.prompt
            assert not ctx.captured_queries  # loaded with it, as select_related did
    assert selectors.candidate_for_feedback(node_uid="a", whisper_log_id=None).decision_id == tie_second.id
