"""Whisper's ledger reads and the session buffer run as plain SQL (whisper/selectors.py, whisper/session.py): each
gives what its ORM form gave, on a ledger with several sessions, times on both sides of each bound, ties in time
and rows without vectors. Runs on SQLite and on PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest
from django.db.models import Q

from whisper import selectors
from whisper.conf import WhisperConf
from whisper.models import AffinityRow, SessionPromptRow, WhisperCandidateRow, WhisperDecisionRow
from whisper.session import buffer_append, buffer_read

from .conftest import NOW, unit

pytestmark = pytest.mark.django_db
CONF = WhisperConf()
SESSIONS = ("s1", "s2", None)


def _ledger() -> None:
    """Decisions of three sessions every 2 minutes over an hour (two at each instant), their candidates, feedback."""
    for i in range(60):
        session = SESSIONS[i % 3]
        decision = ("injected", "silent:gate", "silent:synthetic")[i % 4 % 3]
        row = WhisperDecisionRow.objects.create(
            created=NOW - timedelta(minutes=2 * (i // 2)), session_id=session, decision=decision,
            prompt=f"prompt {i}", prompt_vec=None if i % 5 == 0 else unit(1.0, i / 60).tobytes())
        for rank in range(3):
            WhisperCandidateRow.objects.create(decision=row, node_uid=f"node-{(i + rank) % 7}", short_id="x",
                                               stage="gate", injected=decision == "injected" and rank < 2)
        AffinityRow.objects.create(node_uid=f"node-{i % 7}", prompt_vec=unit(i / 60, 1.0).tobytes(),
                                   signal=(1, -1)[i % 2], source=("explicit", "implicit")[i % 2],
                                   created=NOW - timedelta(minutes=i // 3), decision=row)


def test_feedback_samples_are_the_orm_rows_newest_first():
    _ledger()
    uids = ["node-1", "node-3", "node-3", "node-9"]
    got = selectors.feedback_samples(node_uids=uids)
    want: dict[str, list] = {}
    for uid, vec, signal, source, at in (AffinityRow.objects.filter(node_uid__in=uids).order_by("-created", "-id")
                                         .values_list("node_uid", "prompt_vec", "signal", "source", "created")):
        want.setdefault(uid, []).append((bytes(vec), signal, source, at))
    assert {u: [(s.prompt_vec.tobytes(), s.signal, s.source, s.at) for s in samples] for u, samples in got.items()} \
        == want
    assert sorted(want) == ["node-1", "node-3"]
    assert all(len(v) == 9 for v in want.values())


@pytest.mark.parametrize("session", ["s1", "s2", "absent"])
def test_topic_served_reads_the_orm_rows(session):
    _ledger()
    blobs = (WhisperDecisionRow.objects.filter(session_id=session, decision="injected", prompt_vec__isnull=False)
             .order_by("-created", "-id").values_list("prompt_vec", flat=True)[:selectors.SERVED_LOOKBACK])
    vec = unit(1.0, 0.2)
    best = max((float(np.dot(np.frombuffer(bytes(b), dtype=np.float32), vec)) for b in blobs), default=None)
    for threshold in (0.5, 0.99, 0.99999):
        assert selectors.topic_served(session_id=session, prompt_vec=vec, threshold=threshold) == \
            (best is not None and best >= threshold)
    assert (best is None) == (session == "absent")


@pytest.mark.parametrize("minutes", [0, 10, 31, 120])
@pytest.mark.parametrize("session", ["s1", "s2", "absent"])
def test_served_node_ids_are_the_orm_rows(session, minutes):
    _ledger()
    since = NOW - timedelta(minutes=minutes)
    want = frozenset(WhisperCandidateRow.objects.filter(
        decision__session_id=session, decision__created__gte=since, injected=True).values_list("node_uid", flat=True))
    assert selectors.served_node_ids(session_id=session, since=since) == want


@pytest.mark.parametrize("session", ["s1", "s2", "absent"])
def test_prompt_count_and_next_id_are_the_orm_values(session):
    assert selectors.next_decision_id() == 1
    _ledger()
    newest = WhisperDecisionRow.objects.order_by("-id").values_list("id", flat=True).first()
    assert selectors.next_decision_id() == newest + 1
    want = WhisperDecisionRow.objects.filter(session_id=session).exclude(decision="silent:synthetic").count()
    assert selectors.session_prompt_count(session_id=session) == want
    assert (want > 0) == (session != "absent")


def _orm_append(session: str, prompt: str, vector, now) -> None:
    """buffer_append as the ORM wrote it (the reference)."""
    since = now - timedelta(minutes=CONF.session_gap_minutes)
    SessionPromptRow.objects.create(session_id=session, prompt=prompt, created=now,
                                    vector=None if vector is None else vector.tobytes())
    newest = (SessionPromptRow.objects.filter(session_id=session).order_by("-created", "-id")
              .values("id")[: CONF.buffer_size])
    SessionPromptRow.objects.filter(Q(created__lt=since) | (Q(session_id=session) & ~Q(id__in=newest))).delete()


def _rows(sessions) -> list[tuple]:
    return sorted((s.lower(), p, None if v is None else bytes(v), at) for s, p, v, at in SessionPromptRow.objects
                  .filter(session_id__in=sessions).values_list("session_id", "prompt", "vector", "created"))


def test_the_buffer_keeps_and_reads_what_the_orm_did():
    """The same appends (two sessions, two prompts at each instant, 30 minutes) through buffer_append into sessions
    a and b and through the ORM's statements into A and B: after each, the same rows are left, and the read is the
    ORM's read."""
    for i in range(40):
        mine, theirs = ("a", "b")[i % 2], ("A", "B")[i % 2]
        now = NOW + timedelta(seconds=45 * (i // 2))
        vector = unit(1.0, i / 40) if i % 3 else None
        buffer_append(session_id=mine, prompt=f"p{i}", vector=vector, now=now, conf=CONF)
        _orm_append(theirs, f"p{i}", vector, now)
        assert _rows(["a", "b"]) == _rows(["A", "B"])
        since = now - timedelta(minutes=CONF.session_gap_minutes)
        rows = list(SessionPromptRow.objects.filter(session_id=theirs, created__gte=since, created__lte=now)
                    .order_by("-created", "-id").values_list("prompt", "vector", "created")[:CONF.buffer_size])
        recent = buffer_read(session_id=mine, now=now, conf=CONF)
        assert [(r.prompt, None if r.vector is None else r.vector.tobytes(), r.at) for r in recent] == \
            [(p, None if v is None else bytes(v), at) for p, v, at in reversed(rows)]
    assert len(_rows(["a", "b"])) == 2 * CONF.buffer_size


def _decision(**fields) -> WhisperDecisionRow:
    return WhisperDecisionRow(
        created=NOW, session_id="s1", space="ormah", prompt="How is the index stored? ☃", prompt_hash="ab" * 32,
        prompt_vec=unit(0.6, 0.8).tobytes(), intent="technical", decision="injected", matched_pattern=None,
        node_ids=["n1", "n2"], estimated_tokens=42, budget_tokens=300, gate=0.5, reranker="", elapsed_ms=12.34,
        **fields)


def _candidates(decision: WhisperDecisionRow) -> list[WhisperCandidateRow]:
    return [WhisperCandidateRow(decision=decision, node_uid=f"node-{i}", short_id=f"s{i}", title=f"Title {i}",
                                source="search", retrieval_rank=i + 1 if i else None, retrieval_score=0.1 * i,
                                raw_cosine=None if i == 1 else 0.5, ce_raw=None, ce_abs=None, affinity=-0.25,
                                gate_score=0.75, gate_threshold=0.5, stage=("gate", "injected")[i % 2],
                                final_rank=i if i % 2 else None, injected=bool(i % 2)) for i in range(5)]


def test_the_ledger_rows_inserted_are_the_rows_the_orm_saves():
    from whisper.services.respond import _insert

    ours, theirs = _decision(), _decision()
    _insert([ours], returning=True)
    theirs.save(force_insert=True)
    assert ours.pk == theirs.pk - 1 and not ours._state.adding
    _insert(_candidates(ours))
    WhisperCandidateRow.objects.bulk_create(_candidates(theirs))

    def stored(model, **where):
        return [{k: v for k, v in row.items() if k not in ("id", "decision_id")}
                for row in model.objects.filter(**where).order_by("id").values()]

    assert stored(WhisperDecisionRow, id=ours.pk) == stored(WhisperDecisionRow, id=theirs.pk)
    assert stored(WhisperCandidateRow, decision_id=ours.pk) == stored(WhisperCandidateRow, decision_id=theirs.pk)
    assert len(stored(WhisperCandidateRow, decision_id=ours.pk)) == 5
    ours.estimated_tokens = 40
    ours.save(update_fields=["estimated_tokens"])  # the instance is a saved row to the ORM
    assert WhisperDecisionRow.objects.get(pk=ours.pk).estimated_tokens == 40
