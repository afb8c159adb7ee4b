"""Remembering runs the model before it takes the write lock (the lock has no timeout: a model run inside it
holds every other writer, the watcher, the UI, the API and the jobs, for as long as the batch takes to embed)."""

from __future__ import annotations

from memory.domain.requests import NodeCreate
from memory.models import EvidenceRow, NodeRow
from memory.services import node_remember, nodes_create
from tests.store import lock_watching_embedder as watch


def test_a_batch_is_embedded_before_the_write_lock_is_taken(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "tests.store.lock_watching_embedder.LockWatchingEmbedder"}
    watch.CALLS.clear()
    long = "\n\n".join(f"## Part {i}\n\n" + f"Paragraph {i} on kiln schedules and glaze recipes. " * 20
                       for i in range(4))  # passages too
    results = nodes_create(requests=[NodeCreate(content="Kilns fire at dawn on Tuesdays"),
                                     NodeCreate(content="Glazes are mixed the evening before a firing"),
                                     NodeCreate(content=long)])
    assert NodeRow.objects.filter(uid__in=[r.node.id for r in results]).count() == 3
    assert watch.CALLS, "the model was never called: the test proves nothing"
    assert [depth for _, depth in watch.CALLS] == [0] * len(watch.CALLS)  # no model call under the lock
    assert sum(n for n, _ in watch.CALLS) >= 3 + 4  # the three texts and the long one's passages


def test_remembering_one_memory_with_its_evidence_embeds_before_the_write_lock(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "tests.store.lock_watching_embedder.LockWatchingEmbedder"}
    watch.CALLS.clear()
    result = node_remember(request=NodeCreate(content="The kiln log lives in the shed"), session_id="s1")
    assert EvidenceRow.objects.filter(uid=result.node.source_event_ids[0]).count() == 1
    assert watch.CALLS, "the model was never called: the test proves nothing"
    assert [depth for _, depth in watch.CALLS] == [0] * len(watch.CALLS)
