"""Two agents remembering the same text at once with `?if_exists=return` (what the MCP tool sends) get one memory:
the identical-content check and the write used to run outside the write lock, so four concurrent calls each found
nothing and each wrote a copy (review7: four MCP clients on a live server, four files). Plain remembers still store
every call, as documented."""

from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from memory.models import NodeRow
from tests.api.conftest import TOKEN

pytestmark = pytest.mark.slow
AGENTS = 4


def remember_at_once(url: str, content: str, query: str, route: str = "/remember") -> list[tuple[int, dict]]:
    answers: list = [None] * AGENTS
    start = threading.Barrier(AGENTS)

    def post(i: int) -> None:
        body = {"content": content, "space": "probe"}
        request = urllib.request.Request(url + "/api/agent" + route + query, method="POST",
                                         data=json.dumps({"nodes": [body]} if route.endswith("batch") else body).encode(),
                                         headers={"Authorization": f"Bearer {TOKEN}",
                                                  "Content-Type": "application/json"})
        start.wait()
        with urllib.request.urlopen(request, timeout=60) as response:
            answers[i] = (response.status, json.loads(response.read()))

    threads = [threading.Thread(target=post, args=(i,)) for i in range(AGENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return answers


@pytest.fixture
def server(live_server, transactional_db, settings, home):
    from memory.services import index_sync, self_ensure

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    index_sync()
    self_ensure(name="Dana")
    return live_server.url


def test_concurrent_identical_remembers_with_if_exists_return_store_one_memory(server):
    content = "The deploy key of the billing service rotates every 90 days."
    answers = remember_at_once(server, content, "?if_exists=return")
    assert NodeRow.objects.filter(content=content).count() == 1
    assert sorted(status for status, _ in answers) == [200] * (AGENTS - 1) + [201]
    assert len({body["node"]["id"] for _, body in answers}) == 1


def test_concurrent_plain_remembers_store_every_call(server):
    content = "The staging cluster is rebuilt every Sunday night."
    remember_at_once(server, content, "")
    assert NodeRow.objects.filter(content=content).count() == AGENTS


def test_concurrent_identical_batches_with_if_exists_return_store_one_memory(server):
    content = "Release notes are drafted by the on-call engineer."
    remember_at_once(server, content, "?if_exists=return", route="/remember/batch")
    assert NodeRow.objects.filter(content=content).count() == 1
