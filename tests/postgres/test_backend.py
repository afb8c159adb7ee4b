"""The PostgreSQL backend against a real server with pgvector (run by `make test-pg`; skipped on SQLite)."""

from __future__ import annotations

import json

import pytest

from memory.backends import postgres
from memory.models import NodeRow
from memory.search import Filters, fts_search, vectors
from memory.services import backup_create, backup_restore, node_forget
from tests.memory.test_rebuild_invariant import snapshot
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def backups(home, settings):
    settings.ORMAH = {**settings.ORMAH, "BACKUP_DIR": home / "backups"}
    return home / "backups"


def _row(node) -> int:
    return NodeRow.objects.get(uid=node.id).id


def test_a_word_inside_a_path_or_snake_case_name_is_found(mem):
    node = mem("Ran pytest -q tests/billing and the invoice_total check failed", auto_link=False)

    assert [h.row_id for h in fts_search("billing", 5)] == [_row(node)]
    assert [h.row_id for h in fts_search("invoice", 5)] == [_row(node)]


def test_a_rare_token_outranks_a_common_one(mem):
    for i in range(6):
        mem(f"Weather report number {i}: rain in town", auto_link=False)
    rare = mem("The quarantine service was restarted", auto_link=False)

    assert fts_search("quarantine weather", 1)[0].row_id == _row(rare)


def test_hnsw_with_a_filter_never_starves_the_list(mem, monkeypatch):
    monkeypatch.setattr(postgres, "EXACT_MAX", 0)  # the HNSW path on a small table
    for i in range(40):
        mem(f"Fact number {i} about the weather in town", auto_link=False)
    decisions = [mem(f"We decided to ship release {i} on Friday", type="decision", auto_link=False)
                 for i in range(3)]
    query = vectors.get(_row(decisions[0]))

    hits = vectors.knn(query, 5, types=["decision"])

    assert sorted(h.row_id for h in hits) == sorted(_row(d) for d in decisions)
    assert hits[0].row_id == _row(decisions[0]) and hits[0].cosine == pytest.approx(1.0, abs=1e-5)


def test_vectors_round_trip_byte_for_byte(mem):
    node = mem("A memory whose vector goes to pgvector and back", auto_link=False)
    row_id = _row(node)
    stored = dict(vectors.all_vectors())[row_id]

    assert vectors.get_many([row_id])[row_id].tobytes() == stored
    assert postgres.vector_bytes([row_id])[row_id] == stored


def test_a_backup_holds_no_index_and_a_restore_rebuilds_it(mem, home, backups):
    mem("Dana prefers tabs over spaces in every editor", type="preference", auto_link=False)
    gone = mem("Deploys happen on Tuesdays after the release checklist", type="procedure", auto_link=False)
    saved = snapshot()
    info = backup_create(reason="test")
    node_forget(ref=gone.id)

    manifest = json.loads((info.path / "backup.json").read_text())
    report = backup_restore(name=info.name)

    assert manifest["index"] is None and not (info.path / "index.sqlite3").exists()
    assert report.index == "rebuilt"
    assert snapshot() == saved


def test_filters_reject_every_row_without_an_error(mem):
    mem("Something about the billing service", auto_link=False)

    assert fts_search("billing", 5, Filters(types=("decision",))) == []
