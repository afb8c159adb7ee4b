"""The in-process vector matrix: the same rows as vec0 under any filter, and in step across processes."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory import runtime
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.search import Filters, matrix
from memory.search.semantic import vec0_search, vector_search
from memory.services import node_forget, node_update

ROOT = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
TOPICS = ["deploy the billing service", "soil moisture sensors", "thesis deadline", "cat called Pimenta",
          "postgres work_mem tuning", "flashing garden firmware", "train to Lisbon", "sourdough starter",
          "kubernetes ingress certificates", "guitar practice routine", "tax return receipts", "bike tyre pressure"]
TYPES = ["fact", "decision", "procedure", "event"]
TIERS = ["working", "archival"]
SPACES = [None, "billing", "garden"]
TAGS = ["db", "home", "work"]


def _random_filters(rng: random.Random) -> Filters:
    def some(values):
        return tuple(rng.sample(values, rng.randint(1, len(values) - 1))) if rng.random() < 0.4 else ()

    after = NOW - timedelta(days=rng.randint(5, 60)) if rng.random() < 0.3 else None
    return Filters(
        types=some(TYPES), tiers=some(TIERS), spaces=(some(SPACES) or None) if rng.random() < 0.5 else None,
        tags=some(TAGS) if rng.random() < 0.3 else (), created_after=after,
        created_before=after + timedelta(days=rng.randint(3, 40)) if after and rng.random() < 0.5 else None,
        active_at=NOW if rng.random() < 0.7 else None,
    )


def _seed(mem, rng: random.Random, count: int, start: int = 0) -> list:
    nodes = []
    for i in range(start, start + count):
        nodes.append(mem(
            f"Note {i} about {rng.choice(TOPICS)} and {rng.choice(TOPICS)}", auto_link=False,
            type=rng.choice(TYPES), tier=rng.choice(TIERS), space=rng.choice(SPACES),
            tags=rng.sample(TAGS, rng.randint(0, 2)), created=NOW - timedelta(days=rng.randint(0, 90)),
        ))
    return nodes


def _assert_same(rng: random.Random, rounds: int) -> int:
    embedder = runtime.embedder()
    compared = 0
    for _ in range(rounds):
        filters = _random_filters(rng)
        query = embedder.embed_query(rng.choice(TOPICS))
        limit = rng.choice([1, 3, 5, 10, 40])
        ours = vector_search(query, limit, filters)
        theirs = vec0_search(query, limit, filters)
        assert [h.row_id for h in ours] == [h.row_id for h in theirs], filters
        assert all(abs(a.cosine - b.cosine) < 1e-5 for a, b in zip(ours, theirs))
        compared += len(ours)
    return compared


@pytest.mark.django_db(transaction=True)
def test_matrix_equals_vec0_under_random_filters_through_deltas(mem):
    rng = random.Random(11)
    matrix.reset()
    nodes = _seed(mem, rng, 40)
    for node in rng.sample(nodes, 8):
        node_update(ref=node.id, patch=NodePatch(valid_until=NOW - timedelta(days=rng.randint(1, 20))))
    assert _assert_same(rng, 60) > 100
    # Writes after the first load reach the matrix as deltas: new rows, changed metadata, deletions.
    nodes += _seed(mem, rng, 15, start=40)
    for node in rng.sample(nodes, 5):
        node_update(ref=node.id, patch=NodePatch(tier="archival", space="garden"))
    for node in rng.sample(nodes, 6):
        node_forget(ref=node.id)
    [state] = matrix.current()
    assert state[0].size == NodeRow.objects.count()
    assert _assert_same(rng, 60) > 100


def test_matrix_sees_the_writes_of_its_own_transaction(mem):
    """Inside a transaction (the test's), searches include uncommitted rows through an overlay."""
    node = mem("Dana's cat is called Pimenta", auto_link=False)
    row_id = NodeRow.objects.get(uid=node.id).id
    hits = vector_search(runtime.embedder().embed_query("what is my cat called?"), 1)
    assert [h.row_id for h in hits] == [row_id]


READER = textwrap.dedent("""
    import json, sys
    import django
    django.setup()
    from memory import runtime
    from memory.models import NodeRow
    from memory.search.semantic import vector_search
    query = runtime.embedder().embed_query(sys.argv[1])
    for line in sys.stdin:
        hits = vector_search(query, 3)
        uids = dict(NodeRow.objects.filter(id__in=[h.row_id for h in hits]).values_list("id", "uid"))
        print(json.dumps([uids[h.row_id] for h in hits]), flush=True)
""")


def test_a_vector_written_by_one_process_is_found_by_another(tmp_path):
    from tests.faults.support import child_env

    env = child_env(tmp_path / "home")
    subprocess.run([sys.executable, "manage.py", "init"], cwd=ROOT, env=env, check=True, capture_output=True)

    def remember(text: str) -> str:
        out = subprocess.run([sys.executable, "manage.py", "remember", text, "--json"], cwd=ROOT, env=env,
                             check=True, capture_output=True, text=True).stdout
        return json.loads(out)["id"]

    remember("The garden sensors report soil moisture every fifteen minutes")
    reader = subprocess.Popen([sys.executable, "-c", READER, "how do I flash the espresso machine firmware?"],
                              cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        reader.stdin.write("\n")
        reader.stdin.flush()
        first = json.loads(reader.stdout.readline())  # the reader's matrix is now loaded
        written = remember("To flash the espresso machine firmware, hold the steam button while powering on")
        reader.stdin.write("\n")
        reader.stdin.flush()
        second = json.loads(reader.stdout.readline())
    finally:
        reader.stdin.close()
        reader.wait(timeout=60)
    assert written not in first
    assert second[0] == written
