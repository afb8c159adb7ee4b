"""The auto-links' search before the write lock (memory.services.nodes.links_ahead) and its re-check under it: the
links are those a search under the lock would find, whatever was written, changed or forgotten meanwhile, and
remembers running at once still link to each other."""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from itertools import combinations

import pytest

from memory import index, runtime
from memory.domain.node import new_node_id
from memory.domain.requests import NodeCreate, NodePatch, build_node
from memory.models import EdgeRow, NodeRow
from memory.services import evidence as remember_service
from memory.services import node_create, node_forget, node_update
from memory.services.evidence import _explicit_event, _RememberCall, node_remember
from memory.services.links import _auto_links, _recheck, links_ahead
from memory.services.nodes import nodes_embed_ahead
from memory.writes import write_unit

pytestmark = pytest.mark.django_db(transaction=True)

NOW = datetime(2026, 2, 1, 9, 0, tzinfo=UTC)
# near-duplicates (each pair above the auto-link threshold) and one unrelated memory
KILN = ["The kiln in the studio fires at dawn every Saturday",
        "Every Saturday at dawn the studio kiln is fired",
        "The studio's kiln gets fired at dawn on Saturdays",
        "On Saturdays the kiln in the studio is fired at dawn",
        "At dawn each Saturday we fire the kiln in the studio"]
OTHER = "The invoice for the clay delivery is due on the fifth"


def _linked(a: str, b: str) -> bool:
    return EdgeRow.objects.filter(source__uid=a, target__uid=b).exists() or \
        EdgeRow.objects.filter(source__uid=b, target__uid=a).exists()


def _ahead(texts: list[str]):
    requests = [NodeCreate(content=t, source="agent:t") for t in texts]
    nodes_embed_ahead(requests=requests, now=NOW)
    return requests, links_ahead(requests=requests, now=NOW)


def test_the_recheck_finds_what_a_search_under_the_lock_finds_after_writes_changes_and_forgets(home):
    seeded = [node_create(request=NodeCreate(content=t), now=NOW, auto_link=False).node
              for t in [*KILN[:3], OTHER, "Glaze batches dry for a day", "The wheel needs oil weekly"]]
    requests, ahead = _ahead([KILN[3], KILN[4]])
    assert ahead is not None and any(ahead.found)
    # meanwhile: another remember writes a near-duplicate, one hit is forgotten, another is rewritten away
    written = node_create(request=NodeCreate(content="Saturday dawn is when the studio kiln fires"), now=NOW,
                          auto_link=False).node
    node_forget(ref=seeded[0].id, now=NOW)
    node_update(ref=seeded[1].id, patch=NodePatch(content="The car is parked behind the bakery"), now=NOW)

    with write_unit() as unit:
        nodes = [build_node(r, node_id=new_node_id(), now=NOW) for r in requests]
        own = [v[0] for v in index.node_vectors(nodes, runtime.embedder())[0]]
        assert _recheck(own, ahead) is not None  # the re-check answers, no search again
        rechecked = _auto_links(nodes, unit, ahead)
        searched = _auto_links(nodes, unit, None)
    assert rechecked == searched
    targets = {link.target_id for links in rechecked for link in links}
    assert written.id in targets and seeded[2].id in targets
    assert seeded[0].id not in targets and seeded[1].id not in targets


def test_a_remember_whose_search_ahead_is_stale_still_links_to_what_was_written_meanwhile(home):
    node_create(request=NodeCreate(content=OTHER), now=NOW, auto_link=False)
    calls = []
    for i, text in enumerate(KILN):  # every search ahead runs before any of these memories is written
        (request,), ahead = _ahead([text])
        event = _explicit_event(request, f"s{i}", NOW)
        request = request.model_copy(update={"source_event_ids": [event.id]})
        calls.append(_RememberCall(events=[event], requests=[request], now=NOW, auto_link=True, ahead=ahead))
    ids = [remember_service._remember_alone(call)[0].node.id for call in calls]  # one unit each, in turn
    for a, b in combinations(ids, 2):
        assert _linked(a, b), (a, b)


def test_remembers_of_near_duplicates_at_once_link_every_pair(home):
    node_create(request=NodeCreate(content=OTHER), now=NOW, auto_link=False)
    ids: list[str | None] = [None] * len(KILN)
    start = threading.Barrier(len(KILN))

    def remember(i: int) -> None:
        from django.db import connection
        try:
            start.wait(timeout=60)
            ids[i] = node_remember(request=NodeCreate(content=KILN[i], source="agent:t"), session_id=f"s{i}").node.id
        finally:
            connection.close()

    threads = [threading.Thread(target=remember, args=(i,)) for i in range(len(KILN))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert all(ids) and NodeRow.objects.filter(uid__in=ids).count() == len(KILN)
    for a, b in combinations(ids, 2):
        assert _linked(a, b), (a, b)
