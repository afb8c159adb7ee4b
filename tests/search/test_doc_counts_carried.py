"""Document counts carried across a write where the full-text index says exactly what changed (issue 13, session
24): a new memory adds its words, a write that leaves the indexed words alone keeps every count, anything else
counts afresh; the counts always equal a fresh count."""

from __future__ import annotations

import random

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.backends import backend
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.search import candidates
from memory.search.candidates import doc_counts, store_state
from memory.services import node_update

sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="the FTS5 index's mark (SQLite)")

TERMS = ["garden", "sensor", "soil", "moistur", "zeppelin", "billing", "webhook", "retri", "e-mail", "a b", "it's",
         "report", "the", "jitter"]


def _fresh(terms: list[str], cap: int) -> dict[str, int]:
    return backend().doc_counts(terms, cap)


def _count_reads(ctx) -> list[str]:
    """The statements that counted documents (the vocabulary table or a MATCH)."""
    return [q["sql"] for q in ctx.captured_queries if "node_fts_vocab" in q["sql"] or "MATCH" in q["sql"]]


@sqlite_only
def test_a_new_memory_adds_its_words_without_counting_again(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    mem("Billing retries webhooks with jitter", auto_link=False)
    before = doc_counts(TERMS)
    mem("Zeppelin sensors over the garden; an e-mail about it's soil", auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        after = doc_counts(TERMS)
    assert after == _fresh(TERMS, candidates.DF_CAP)
    assert after["zeppelin"] == before["zeppelin"] + 1 == 1 and after["garden"] == 2 and after["billing"] == 1
    # the single-token terms were carried; only the terms of several tokens ("e-mail", "a b", "it's") are counted
    # again, by their MATCH
    assert all("MATCH" in sql for sql in _count_reads(ctx)), _count_reads(ctx)
    assert len(_count_reads(ctx)) == 3


@sqlite_only
def test_a_write_that_leaves_the_words_alone_keeps_every_count(mem, transactional_db):
    node = mem("The garden sensors report soil moisture", auto_link=False)
    mem("Billing retries webhooks with jitter", auto_link=False)
    doc_counts(TERMS)
    state = store_state()
    node_update(ref=node.id, patch=NodePatch(confidence=0.4))
    assert store_state() != state  # the state moved, the indexed words did not
    with CaptureQueriesContext(connection) as ctx:
        after = doc_counts(TERMS)
    assert after == _fresh(TERMS, candidates.DF_CAP)
    assert _count_reads(ctx) == []


@sqlite_only
def test_counts_read_while_the_index_moved_are_not_kept(mem, transactional_db):
    mem("The garden sensors report soil moisture", auto_link=False)
    state = store_state()
    doc_counts(["garden"], state)
    mem("Zeppelin over the garden", auto_link=False)
    # asked with the state read before that write: read now, so they hold the new memory; kept, the carry to the
    # next state would add it a second time
    assert doc_counts(["zeppelin"], state) == {"zeppelin": 1}
    assert doc_counts(["zeppelin", "garden"]) == {"zeppelin": 1, "garden": 2}


@pytest.mark.parametrize("cap", [1, 2, candidates.DF_CAP])
def test_counts_equal_a_fresh_count_through_creates_edits_tags_and_deletes(mem, transactional_db, cap):
    rng = random.Random(cap)
    vocabulary = ["garden", "sensors", "soil", "zeppelin", "billing", "webhooks", "jitter", "reports", "e-mail"]
    terms = ["garden", "sensor", "soil", "zeppelin", "billing", "webhook", "jitter", "report", "e-mail", "absent"]
    nodes = []
    for step in range(30):
        for _ in range(rng.choice([1, 1, 2])):  # two writes between reads: a delete and a create keep the count
            action = rng.choice(["create", "create", "create", "edit", "tags", "confidence", "delete"]) if nodes \
                else "create"
            text = " ".join(rng.sample(vocabulary, 3))
            if action == "create":
                nodes.append(mem(f"Note {step}: {text}", auto_link=False))
            elif action == "edit":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(content=f"Edited {step}: {text}"))
            elif action == "tags":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(tags=rng.sample(["zeppelin", "garden", "ops"], 2)))
            elif action == "confidence":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(confidence=rng.choice([0.3, 0.6, 0.9])))
            else:
                NodeRow.objects.filter(uid=nodes.pop(rng.randrange(len(nodes))).id).delete()
        assert doc_counts(terms, cap=cap) == _fresh(terms, cap), step


def test_a_delete_and_a_create_between_two_reads_count_afresh(mem, transactional_db):
    old = mem("Zeppelin over the garden", auto_link=False)
    mem("The garden sensors report soil moisture", auto_link=False)
    terms = ["zeppelin", "garden", "billing"]
    assert doc_counts(terms) == {"zeppelin": 1, "garden": 2, "billing": 0}
    NodeRow.objects.filter(uid=old.id).delete()
    mem("Billing retries webhooks", auto_link=False)  # as many memories as before, one of them new
    assert doc_counts(terms) == {"zeppelin": 0, "garden": 1, "billing": 1}


@pytest.fixture
def fresh_process():
    """The counts a new process holds: none. The test database is emptied between tests and its ids and write
    sequence start again, which a store never does; counts kept from an earlier test would be another store's."""
    candidates._df.clear()
    yield
    candidates._df.clear()


@sqlite_only
def test_an_older_memory_written_again_beside_a_new_one_keeps_the_counts(mem, transactional_db, fresh_process):
    node = mem("The garden sensors report soil moisture", auto_link=False)
    mem("Billing retries webhooks with jitter", auto_link=False)
    doc_counts(TERMS)
    node_update(ref=node.id, patch=NodePatch(confidence=0.4))  # its row written again (feedback), its words not
    mem("Zeppelin sensors over the garden", auto_link=False)  # and a new memory: the index moved
    with CaptureQueriesContext(connection) as ctx:
        after = doc_counts(TERMS)
    assert after == _fresh(TERMS, candidates.DF_CAP)
    assert after["zeppelin"] == 1 and after["garden"] == 2 and after["billing"] == 1
    # carried: only the terms of several tokens ("e-mail", "a b", "it's") are counted again, by their MATCH (before
    # session 25 the older row written since made every count read again)
    assert all("MATCH" in sql for sql in _count_reads(ctx)), _count_reads(ctx)


@sqlite_only
@pytest.mark.parametrize("patch", [NodePatch(content="Zeppelin hangar notes"), NodePatch(tags=["zeppelin"]),
                                   NodePatch(title="Zeppelin")])
def test_an_older_memorys_words_edited_beside_a_new_one_count_afresh(mem, transactional_db, fresh_process, patch):
    node = mem("The garden sensors report soil moisture", auto_link=False)
    doc_counts(TERMS)
    node_update(ref=node.id, patch=patch)
    mem("Billing retries webhooks with jitter", auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        after = doc_counts(TERMS)
    assert after == _fresh(TERMS, candidates.DF_CAP)
    assert after["zeppelin"] == 1 and after["billing"] == 1
    assert any("node_fts_vocab" in sql for sql in _count_reads(ctx))  # counted afresh


@sqlite_only
@pytest.mark.parametrize("seed", [1, 2])
def test_counts_equal_a_fresh_count_with_several_writes_between_reads(mem, transactional_db, fresh_process, seed):
    rng = random.Random(seed)
    vocabulary = ["garden", "sensors", "soil", "zeppelin", "billing", "webhooks", "jitter", "reports", "e-mail"]
    terms = ["garden", "sensor", "soil", "zeppelin", "billing", "webhook", "jitter", "report", "e-mail", "absent"]
    nodes = [mem(f"Note: {' '.join(rng.sample(vocabulary, 3))}", auto_link=False) for _ in range(3)]
    texts = {n.id: n.content for n in nodes}
    for step in range(30):
        for _ in range(rng.choice([1, 2, 3, 4])):  # the soak's many agents: several writes between two reads
            action = rng.choice(["create", "create", "confidence", "confidence", "same", "edit", "tags", "delete"])
            if action == "create" or len(nodes) < 2:
                nodes.append(mem(f"Note {step}: {' '.join(rng.sample(vocabulary, 3))}", auto_link=False))
                texts[nodes[-1].id] = nodes[-1].content
            elif action == "confidence":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(confidence=rng.choice([0.3, 0.6, 0.9])))
            elif action == "same":  # its words written again as they were
                node = rng.choice(nodes)
                node_update(ref=node.id, patch=NodePatch(content=texts[node.id], confidence=rng.random()))
            elif action == "edit":
                node = rng.choice(nodes)
                texts[node.id] = f"Edited {step}: {' '.join(rng.sample(vocabulary, 3))}"
                node_update(ref=node.id, patch=NodePatch(content=texts[node.id]))
            elif action == "tags":
                node_update(ref=rng.choice(nodes).id, patch=NodePatch(tags=rng.sample(["zeppelin", "garden", "ops"], 2)))
            else:
                NodeRow.objects.filter(uid=nodes.pop(rng.randrange(len(nodes))).id).delete()
        assert doc_counts(terms) == _fresh(terms, candidates.DF_CAP), step


@sqlite_only
def test_a_store_past_the_digest_limit_keeps_none_and_counts_afresh(mem, transactional_db, fresh_process,
                                                                    monkeypatch):
    monkeypatch.setattr(candidates, "TEXTS_MAX", 2)
    node = mem("The garden sensors report soil moisture", auto_link=False)
    mem("Billing retries webhooks with jitter", auto_link=False)
    mem("Zeppelin over the garden", auto_link=False)
    doc_counts(TERMS)
    assert candidates._df[store_state()[0]].texts is None
    node_update(ref=node.id, patch=NodePatch(confidence=0.4))
    mem("Zeppelin sensors report", auto_link=False)
    with CaptureQueriesContext(connection) as ctx:
        after = doc_counts(TERMS)
    assert after == _fresh(TERMS, candidates.DF_CAP)
    assert any("node_fts_vocab" in sql for sql in _count_reads(ctx))  # counted afresh, as before the digests
    carry = [q["sql"] for q in ctx.captured_queries if "LEFT JOIN memory_noderow n ON" in q["sql"]]
    assert carry and all(" OR m.total" not in sql for sql in carry)  # rows written since only, by their index
