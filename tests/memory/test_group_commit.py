"""Group commit (memory.group_commit): remembers queued behind the write lock are written as one group, each caller
gets its own memory or its own error, and nothing is answered before it is written."""

from __future__ import annotations

import threading
import time

import pytest

from memory import runtime
from memory.domain.requests import ConnectionIn, NodeCreate
from memory.errors import ValidationFailed
from memory.models import EvidenceRow, NodeRow
from memory.services import evidence as remember_service
from memory.services.evidence import node_remember
from memory.writes import exclusive

pytestmark = pytest.mark.django_db(transaction=True)

UNKNOWN = "0f0f0f0f-0f0f-4f0f-8f0f-0f0f0f0f0f0f"


def _remember_while_locked(requests: list[NodeCreate]) -> list[object]:
    """Start one caller per request while this thread holds the write lock; release it once all have queued."""
    outcomes: list[object] = [None] * len(requests)

    def call(i: int) -> None:
        try:
            outcomes[i] = node_remember(request=requests[i], session_id=f"s{i}")
        except Exception as exc:  # the caller's own error, checked by the test
            outcomes[i] = exc

    threads = [threading.Thread(target=call, args=(i,), daemon=True) for i in range(len(requests))]
    with exclusive():
        for t in threads:
            t.start()
        deadline = time.monotonic() + 120
        while remember_service._REMEMBER.waiting() < len(requests) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert remember_service._REMEMBER.waiting() == len(requests)
    for t in threads:
        t.join(timeout=120)
    return outcomes


def test_remembers_queued_behind_the_lock_are_written_as_one_group(home):
    groups_before = remember_service._REMEMBER.sizes[4]
    texts = ["The kiln fires at dawn", "Glaze batches dry for a day", "The wheel needs oil weekly",
             "Clay arrives on Tuesdays"]
    outcomes = _remember_while_locked([NodeCreate(content=t, source="agent:t") for t in texts])
    assert remember_service._REMEMBER.sizes[4] == groups_before + 1
    assert sorted(o.node.content for o in outcomes) == sorted(texts)
    for outcome in outcomes:
        row = NodeRow.objects.get(uid=outcome.node.id)
        assert runtime.store().path_for(row.uid) is not None
        assert EvidenceRow.objects.filter(uid=outcome.node.source_event_ids[0], kind="explicit_memory").exists()


def test_one_callers_invalid_remember_fails_alone_in_its_group(home):
    requests = [NodeCreate(content="The kiln fires at dawn", source="agent:t"),
                NodeCreate(content="Links to nothing", source="agent:t",
                           connections=[ConnectionIn(target=UNKNOWN)]),
                NodeCreate(content="Clay arrives on Tuesdays", source="agent:t")]
    outcomes = _remember_while_locked(requests)
    assert isinstance(outcomes[1], ValidationFailed)
    assert [o.node.content for o in (outcomes[0], outcomes[2])] == ["The kiln fires at dawn",
                                                                     "Clay arrives on Tuesdays"]
    assert sorted(NodeRow.objects.filter(is_self=False).values_list("content", flat=True)) == [
        "Clay arrives on Tuesdays", "The kiln fires at dawn"]
    assert len(list(runtime.store().nodes_dir.glob("*.md"))) == 2
