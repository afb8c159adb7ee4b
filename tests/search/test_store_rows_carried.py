"""The centroid's store rows carried across writes by the vector log's delta (issue 13, session 24): the same rows as
reading every row, without reading every row after a write."""

from __future__ import annotations

import random

import pytest

from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.search import centroid
from memory.services import node_update


@pytest.fixture(autouse=True)
def _nothing_held():
    getattr(centroid, "_rows", {}).clear()
    yield
    getattr(centroid, "_rows", {}).clear()


def _carried() -> list[tuple[int, str]]:
    with connection.cursor() as cur:
        return centroid._store_rows(cur)


def _every_row() -> list[tuple[int, str]]:
    with connection.cursor() as cur:
        return centroid._read_sample(cur)


def test_a_write_carries_the_rows_without_reading_every_row(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    node = mem("Billing retries webhooks with jitter", auto_link=False)
    centroid._read_signature(2)
    mem("Zeppelin over the garden", auto_link=False)
    node_update(ref=node.id, patch=NodePatch(content="Billing retries webhooks with backoff"))
    with CaptureQueriesContext(connection) as ctx:
        signature = centroid._read_signature(3)
    assert not [q["sql"] for q in ctx.captured_queries if "ORDER BY uid" in q["sql"]]
    rows = _carried()
    assert rows == _every_row() and len(rows) == 3 and signature[1] == 3


def test_nothing_is_kept_inside_a_transaction(mem, transactional_db):
    from django.db import transaction

    mem("The garden sensors report soil moisture", auto_link=False)
    with transaction.atomic():
        assert _carried() == _every_row()
    assert centroid._rows == {}


def test_the_signature_after_a_write_is_the_one_read_afresh(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    first = centroid._read_signature(1)
    mem("Zeppelin over the garden", auto_link=False)
    carried = centroid._read_signature(2)
    centroid._rows.clear()
    assert carried == centroid._read_signature(2) != first


def test_rows_equal_every_row_through_creates_edits_and_deletes(mem, transactional_db):
    rng = random.Random(5)
    words = ["garden", "sensors", "soil", "zeppelin", "billing", "webhooks", "jitter", "reports"]
    nodes = [mem("Note zero: garden", auto_link=False)]
    _carried()
    for step in range(30):
        for _ in range(rng.choice([1, 1, 2])):
            action = rng.choice(["create", "create", "edit", "confidence", "delete"]) if nodes else "create"
            text = " ".join(rng.sample(words, 3))
            if action == "create":
                nodes.append(mem(f"Note {step}: {text}", auto_link=False))
            elif action == "edit":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(content=f"Edited {step}: {text}"))
            elif action == "confidence":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(confidence=rng.choice([0.3, 0.6, 0.9])))
            else:
                NodeRow.objects.filter(uid=nodes.pop(rng.randrange(len(nodes))).id).delete()
        assert _carried() == _every_row(), step


def test_a_store_past_the_sample_reads_the_sample(mem, transactional_db, monkeypatch):
    monkeypatch.setattr(centroid, "CENTROID_SAMPLE", 2)
    for text in ("The garden sensors", "Billing retries", "Zeppelin over"):
        mem(text, auto_link=False)
    assert _carried() == _every_row() and len(_every_row()) == 2
    mem("Soil moisture", auto_link=False)
    assert _carried() == _every_row()
