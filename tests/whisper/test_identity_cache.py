"""The identity set is read once per store state and kept per process (whisper.selectors.identity_hits): a memory
the self node defines that another connection adds, edits, archives, connects or deletes shows in this process's
next read and next whisper call; one that expires leaves with time alone (issue 13 item 2). Each write runs on a
thread of its own (its own database connection): nothing tells this one's cache, which must read the state."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from memory.domain.enums import EdgeType, Tier
from memory.domain.node import utcnow
from memory.domain.requests import NodeCreate, NodePatch
from memory.services import edge_create, node_create, node_forget, node_update, self_ensure
from whisper import selectors
from whisper.models import WhisperCandidateRow
from whisper.services import whisper_respond

pytestmark = pytest.mark.django_db(transaction=True)

IDENTITY_PROMPT = "what do I do for a living?"


def _elsewhere(write):
    """Run a write on another thread (its own connection, closed after) and return what it returned."""
    out: list = []

    def run() -> None:
        try:
            out.append(write())
        except Exception as exc:  # noqa: BLE001 - re-raised in the test's thread below
            out.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout=300)
    assert not thread.is_alive()
    if isinstance(out[0], Exception):
        raise out[0]
    return out[0]


def _remember(text: str, **fields):
    return node_create(request=NodeCreate(content=text, **fields), auto_link=False).node


@pytest.fixture
def job(home):
    """The self node and one memory it defines, the identity set read once (kept)."""
    self_ensure()
    node = _remember("I work as a translator from Portuguese into German.", title="Work", about_self=True)
    assert [h.node_id for h in selectors.identity_hits(now=utcnow())] == [node.id]
    return node


def _ids() -> list[str]:
    return sorted(h.node_id for h in selectors.identity_hits(now=utcnow()))


def test_an_unchanged_store_reads_only_its_state(job):
    with CaptureQueriesContext(connection) as ctx:
        assert [h.title for h in selectors.identity_hits(now=utcnow())] == ["Work"]
    assert len(ctx.captured_queries) == 1  # the store state; the set itself is kept


def test_a_new_identity_memory_shows_in_the_next_read(job):
    home = _elsewhere(lambda: _remember("I rent a small flat in Leipzig.", title="Home", about_self=True))
    assert _ids() == sorted([job.id, home.id])


def test_an_edit_shows_in_the_next_read(job):
    _elsewhere(lambda: node_update(ref=job.id, patch=NodePatch(title="Translator")))
    assert [h.title for h in selectors.identity_hits(now=utcnow())] == ["Translator"]


def test_a_defines_edge_added_to_the_self_node_shows_in_the_next_read(job):
    car = _remember("I drive an old blue Renault Clio, mostly at weekends.", title="Clio")
    assert _ids() == [job.id]
    me = self_ensure()
    _elsewhere(lambda: edge_create(source_ref=me.id, target_ref=car.id, edge=EdgeType.DEFINES))
    assert _ids() == sorted([job.id, car.id])


def test_an_expired_memory_leaves_with_time_alone(job):
    now = utcnow()
    _elsewhere(lambda: node_update(ref=job.id, patch=NodePatch(valid_until=now + timedelta(days=1))))
    assert [h.node_id for h in selectors.identity_hits(now=now)] == [job.id]
    with CaptureQueriesContext(connection) as ctx:
        assert selectors.identity_hits(now=now + timedelta(days=2)) == []
    assert len(ctx.captured_queries) == 1  # the store state: nothing was written


def _candidates(result) -> set[str]:
    return set(WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id).values_list("node_uid", flat=True))


@pytest.mark.parametrize("change", ["archive", "forget"])
def test_an_archived_or_forgotten_memory_leaves_the_next_whisper_call(job, change):
    assert job.id in _candidates(whisper_respond(prompt=IDENTITY_PROMPT, session_id="cache"))
    if change == "archive":
        _elsewhere(lambda: node_update(ref=job.id, patch=NodePatch(tier=Tier.ARCHIVAL)))
    else:
        _elsewhere(lambda: node_forget(ref=job.id))
    assert job.id not in _candidates(whisper_respond(prompt=IDENTITY_PROMPT, session_id="cache"))


def test_inside_a_transaction_the_set_is_read_afresh(job):
    with transaction.atomic(), CaptureQueriesContext(connection) as ctx:
        assert [h.title for h in selectors.identity_hits(now=utcnow())] == ["Work"]
    sqls = [q["sql"] for q in ctx.captured_queries]
    assert not any("node_vec_log" in s for s in sqls) and any("memory_edgerow" in s for s in sqls)
