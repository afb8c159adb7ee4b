"""Group commit (memory.group_commit): remembers and confirmed uses queued behind the write lock are written as one
group, each caller gets its own result or its own error, nothing is answered before it is written, and a group that
fails is retried alone without writing anything twice."""

from __future__ import annotations

import os
import stat
import threading
import time
from collections.abc import Callable
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta

import pytest
from django.db import DEFAULT_DB_ALIAS, OperationalError, connections

from memory import runtime
from memory.docstore.models import DocumentVersionRow
from memory.domain.evidence import decode_event
from memory.domain.requests import ConnectionIn, NodeCreate
from memory.errors import NodeNotFound, StorageError, ValidationFailed
from memory.group_commit import GroupCommit
from memory.models import AuditRow, EvidenceRow, NodeRow
from memory.services import evidence as remember_service
from memory.services import lifecycle, node_confirm_use, node_create
from memory.services.evidence import node_remember
from memory.writes import exclusive, unit_open
from tests.postgres import postgres_only

pytestmark = pytest.mark.django_db(transaction=True)

UNKNOWN = "0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f"
T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
_thread = threading.local()  # the index transactions a unit of the caller thread running now has committed


def _while_locked(group: GroupCommit, calls: list[Callable[[], object]], fault=None) -> tuple[list[object], int]:
    """Start one caller per call while this thread holds the write lock, each queued before the next starts (so
    their group takes them in this order); release the lock once all have queued. Returns each call's result (or
    its exception) and how many transactions the callers' threads committed (the group's leader writes for all).
    `fault`: a database execute wrapper installed in each caller's thread."""
    outcomes: list[object] = [None] * len(calls)
    commits: list[int] = []

    def call(i: int) -> None:
        conn = connections[DEFAULT_DB_ALIAS]
        real_commit = conn.commit

        def counted_commit() -> None:
            real_commit()
            commits.append(i)
            if unit_open():
                _thread.unit_commits = getattr(_thread, "unit_commits", 0) + 1

        conn.commit = counted_commit
        try:
            with conn.execute_wrapper(fault) if fault else nullcontext():
                outcomes[i] = calls[i]()
        except Exception as exc:  # the caller's own error, checked by the test
            outcomes[i] = exc
        finally:
            del conn.commit
            conn.close()

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(len(calls))]
    with exclusive():
        for n, t in enumerate(threads, start=1):
            t.start()
            deadline = time.monotonic() + 120
            while group.waiting() < n and time.monotonic() < deadline:
                time.sleep(0.01)
            assert group.waiting() == n
    for t in threads:
        t.join(timeout=120)
        assert not t.is_alive()
    return outcomes, len(commits)


def _remember(text: str, i: int, now: datetime | None = None) -> Callable[[], object]:
    return lambda: node_remember(request=NodeCreate(content=text, source="agent:t"), session_id=f"s{i}", now=now)


def _memories() -> list[str]:
    return sorted(NodeRow.objects.filter(is_self=False).values_list("content", flat=True))


# -- remember ---------------------------------------------------------------------------------------------------------

def test_remembers_queued_behind_the_lock_are_written_as_one_group(home):
    groups_before = remember_service._REMEMBER.sizes[4]
    texts = ["The kiln fires at dawn", "Glaze batches dry for a day", "The wheel needs oil weekly",
             "Clay arrives on Tuesdays"]
    outcomes, _ = _while_locked(remember_service._REMEMBER, [_remember(t, i) for i, t in enumerate(texts)])
    assert remember_service._REMEMBER.sizes[4] == groups_before + 1
    assert [o.node.content for o in outcomes] == texts
    for outcome in outcomes:
        row = NodeRow.objects.get(uid=outcome.node.id)
        assert runtime.store().path_for(row.uid) is not None
        assert EvidenceRow.objects.filter(uid=outcome.node.source_event_ids[0], kind="explicit_memory").exists()


@pytest.mark.parametrize("callers", [1, 3])
def test_a_remember_commits_its_evidence_rows_and_its_memories_in_one_transaction(home, callers):
    _remember("Clay arrives on Tuesdays", 9)()  # the first write of a home creates the vector table (a commit)
    texts = ["The kiln fires at dawn", "Glaze batches dry for a day", "The wheel needs oil weekly"][:callers]
    outcomes, commits = _while_locked(remember_service._REMEMBER, [_remember(t, i) for i, t in enumerate(texts)])
    assert commits == 1
    for outcome in outcomes:
        assert EvidenceRow.objects.filter(uid=outcome.node.source_event_ids[0], kind="explicit_memory").exists()
    assert _memories() == sorted([*texts, "Clay arrives on Tuesdays"])


def test_an_invalid_remember_alone_still_indexes_its_event(home):
    with pytest.raises(ValidationFailed):
        node_remember(request=NodeCreate(content="Links to nothing", source="agent:t",
                                         connections=[ConnectionIn(target=UNKNOWN)]), session_id="s1")
    assert list(EvidenceRow.objects.values_list("text", flat=True)) == ["Links to nothing"]
    assert _memories() == []


def test_one_callers_invalid_remember_fails_alone_in_its_group(home):
    def invalid() -> object:
        return node_remember(request=NodeCreate(content="Links to nothing", source="agent:t",
                                                connections=[ConnectionIn(target=UNKNOWN)]), session_id="s1")

    outcomes, _ = _while_locked(remember_service._REMEMBER, [_remember("The kiln fires at dawn", 0), invalid,
                                                             _remember("Clay arrives on Tuesdays", 2)])
    assert isinstance(outcomes[1], ValidationFailed)
    assert [outcomes[0].node.content, outcomes[2].node.content] == ["The kiln fires at dawn",
                                                                    "Clay arrives on Tuesdays"]
    assert _memories() == ["Clay arrives on Tuesdays", "The kiln fires at dawn"]
    assert len(list(runtime.store().nodes_dir.glob("*.md"))) == 2


def test_a_group_whose_evidence_append_fails_on_a_later_day_appends_each_event_once(home):
    (home / "evidence" / "2026-03-02.jsonl").mkdir(parents=True)  # the second day's file cannot be written
    outcomes, _ = _while_locked(remember_service._REMEMBER, [
        _remember("The kiln fires at dawn", 0, datetime(2026, 3, 1, 23, 59, tzinfo=UTC)),
        _remember("Clay arrives on Tuesdays", 1, datetime(2026, 3, 2, 0, 1, tzinfo=UTC))])
    assert isinstance(outcomes[1], StorageError)
    lines = (home / "evidence" / "2026-03-01.jsonl").read_text().splitlines()
    assert [decode_event(line).id for line in lines] == list(outcomes[0].node.source_event_ids)
    assert _memories() == ["The kiln fires at dawn"]


def test_a_group_whose_evidence_rows_fail_after_the_append_never_appends_it_again(home):
    fired = threading.Event()

    def refuse_the_first_evidence_rows(execute, sql, params, many, context):
        if not fired.is_set() and sql.lstrip().upper().startswith("INSERT") and EvidenceRow._meta.db_table in sql:
            fired.set()
            raise OperationalError("disk I/O error")
        return execute(sql, params, many, context)

    outcomes, _ = _while_locked(remember_service._REMEMBER, [_remember("The kiln fires at dawn", 0),
                                                             _remember("Clay arrives on Tuesdays", 1)],
                                fault=refuse_the_first_evidence_rows)
    assert fired.is_set()
    assert [o.node.content for o in outcomes] == ["The kiln fires at dawn", "Clay arrives on Tuesdays"]
    ids = [decode_event(line).id for day_file in sorted((home / "evidence").glob("*.jsonl"))
           for line in day_file.read_text().splitlines()]
    assert ids == [o.node.source_event_ids[0] for o in outcomes]
    assert sorted(EvidenceRow.objects.values_list("uid", flat=True)) == sorted(ids)


@postgres_only
def test_a_connection_lost_after_the_groups_commit_never_writes_its_remembers_again(home):
    fired = threading.Event()
    newest_seq = f'MAX("{DocumentVersionRow._meta.db_table}"."seq")'

    def lose_the_connection_after_the_commit(execute, sql, params, many, context):
        if not fired.is_set() and getattr(_thread, "unit_commits", 0) and not unit_open() and newest_seq in sql:
            fired.set()
            try:
                context["cursor"].execute("SELECT pg_terminate_backend(pg_backend_pid())")
            except Exception:  # the server ends this session, as a lost connection does
                pass
        return execute(sql, params, many, context)

    outcomes, _ = _while_locked(remember_service._REMEMBER, [_remember("The kiln fires at dawn", 0),
                                                             _remember("Clay arrives on Tuesdays", 1)],
                                fault=lose_the_connection_after_the_commit)
    assert fired.is_set()
    assert [o.node.content for o in outcomes] == ["The kiln fires at dawn", "Clay arrives on Tuesdays"]
    assert _memories() == ["Clay arrives on Tuesdays", "The kiln fires at dawn"]
    assert len(list(runtime.store().nodes_dir.glob("*.md"))) == 2


# -- confirmed use ----------------------------------------------------------------------------------------------------

def _use(ref: str, now: datetime, source: str = "recall_node") -> Callable[[], object]:
    return lambda: node_confirm_use(ref=ref, now=now, source=source)


def test_a_group_of_confirmed_uses_pays_one_folder_fsync_and_one_transaction(home, monkeypatch):
    nodes = [node_create(request=NodeCreate(content=t), now=T0, auto_link=False).node
             for t in ("The kiln fires at dawn", "Glaze batches dry for a day", "The wheel needs oil weekly")]
    folder_fsyncs: list[int] = []
    real_fsync = os.fsync

    def counted_fsync(fd: int) -> None:
        if stat.S_ISDIR(os.fstat(fd).st_mode):
            folder_fsyncs.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", counted_fsync)
    groups_before = lifecycle._CONFIRM.sizes[4]
    now = T0 + timedelta(days=10)
    outcomes, commits = _while_locked(lifecycle._CONFIRM, [_use(nodes[0].id, now), _use(nodes[1].id, now),
                                                           _use(nodes[2].id, now), _use(nodes[0].id[:8], now)])
    assert lifecycle._CONFIRM.sizes[4] == groups_before + 1
    assert (len(folder_fsyncs), commits) == (1, 1)
    assert [o.access_count for o in outcomes] == [1, 1, 1, 2]
    assert sorted(NodeRow.objects.filter(is_self=False).values_list("access_count", flat=True)) == [1, 1, 2]


def test_a_failed_group_of_confirmed_uses_keeps_no_promote_audit_row(home):
    old = node_create(request=NodeCreate(content="An archived detail", tier="archival"), now=T0,
                      auto_link=False).node
    now = T0 + timedelta(days=90)
    outcomes, commits = _while_locked(lifecycle._CONFIRM, [_use(old.id, now, "feedback"), _use("ffffffff", now)])
    assert isinstance(outcomes[1], NodeNotFound)
    assert outcomes[0].tier == "working"
    assert list(AuditRow.objects.filter(node_uid=old.id).values_list("operation", flat=True)) == ["promote"]
    assert commits == 1  # the use written alone; the failed group committed nothing and re-synced nothing
    assert NodeRow.objects.get(uid=old.id).tier == "working"
