"""The vector leg: filters inside vec0 or as candidate lists, so a filter never leaves fewer than `limit` hits."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory import runtime
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.search import Filters, vector_search
from memory.search.semantic import cosine_map, cosines_for
from memory.services import node_update

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def _vec(text: str):
    return runtime.embedder().embed_query(text)


def _uids(hits) -> list[str]:
    return [NodeRow.objects.get(id=h.row_id).uid for h in hits]


def test_outdated_nearest_neighbours_do_not_starve_the_list(mem):
    stale = [mem(f"The deploy procedure version {i}: run make release on the build host", auto_link=False)
             for i in range(8)]
    fresh = [mem(text, auto_link=False) for text in (
        "Garden sensors report soil moisture every fifteen minutes",
        "The thesis deadline moved to February",
        "Dana's cat is called Pimenta",
    )]
    for node in stale:
        node_update(ref=node.id, patch=NodePatch(valid_until=datetime(2026, 1, 1, tzinfo=UTC)))
    hits = vector_search(_vec("how do I deploy a release?"), 3, Filters(active_at=NOW))
    assert sorted(_uids(hits)) == sorted(n.id for n in fresh)


def test_tag_and_date_filters_use_a_candidate_list(mem):
    for i in range(6):
        mem(f"Postgres tuning note {i}: raise work_mem for the invoice report", tags=["db"], auto_link=False)
    tagged = mem("Moisture sensor calibration in a glass of water", tags=["garden"], auto_link=False,
                 created=datetime(2026, 3, 1, tzinfo=UTC))
    hits = vector_search(_vec("postgres work_mem tuning"), 3, Filters(tags=("garden",)))
    assert _uids(hits) == [tagged.id]
    hits = vector_search(_vec("postgres work_mem tuning"), 3,
                         Filters(created_after=datetime(2026, 2, 1, tzinfo=UTC),
                                 created_before=datetime(2026, 4, 1, tzinfo=UTC)))
    assert _uids(hits) == [tagged.id]


def test_metadata_filters_run_inside_vec0(mem):
    for i in range(10):
        mem(f"Billing deploy step {i}: tag the release and run make deploy", space="billing", auto_link=False)
    garden = [mem(f"Garden firmware step {i}: flash the board over the air", space="garden", type="procedure",
                  auto_link=False) for i in range(3)]
    hits = vector_search(_vec("make deploy release"), 3, Filters(spaces=("garden",)))
    assert sorted(_uids(hits)) == sorted(n.id for n in garden)
    assert len(vector_search(_vec("make deploy release"), 3, Filters(types=("procedure",)))) == 3
    assert vector_search(_vec("make deploy release"), 3, Filters(spaces=())) == []


def test_min_cosine_drops_weak_neighbours(mem):
    mem("Dana's cat is called Pimenta", auto_link=False)
    assert vector_search(_vec("Kubernetes ingress TLS certificates"), 5, min_cosine=0.9) == []


def test_cosines_for_measures_given_rows(mem):
    node = mem("Dana's cat is called Pimenta", auto_link=False)
    row_id = NodeRow.objects.get(uid=node.id).id
    [hit] = cosines_for(_vec("what is my cat called?"), [row_id])
    [knn] = vector_search(_vec("what is my cat called?"), 1)
    assert hit.row_id == row_id
    assert abs(hit.cosine - knn.cosine) < 1e-5


@pytest.mark.parametrize("index", ["matrix", "vec0"])
def test_the_cosine_map_is_the_cosines_of_the_hits(mem, settings, index):
    settings.ORMAH = {**settings.ORMAH, "VECTOR_INDEX": index}
    texts = ["Dana's cat is called Pimenta", "The deploy runs make release", "Pimenta eats fish on Fridays"]
    rows = [NodeRow.objects.get(uid=mem(t, auto_link=False).id).id for t in texts]
    query = _vec("what does the cat eat?")
    got = cosine_map(query, rows + [10**9])
    assert got == {h.row_id: h.cosine for h in cosines_for(query, rows + [10**9])}
    assert sorted(got) == sorted(rows)


def test_knn_with_a_single_candidate_row_finds_it(mem):
    from memory.search import vectors

    mem("Postgres note one", auto_link=False)
    node = mem("Postgres note two", auto_link=False)
    row_id = NodeRow.objects.get(uid=node.id).id
    assert [h.row_id for h in vectors.knn(_vec("postgres"), 3, row_ids=[row_id])] == [row_id]


def test_every_candidate_strategy_gives_the_same_hits(mem, monkeypatch):
    from memory.search import semantic

    for i in range(12):
        mem(f"Release note {i}: the deploy pipeline tags images and runs migrations", tags=["ops"] if i % 2 else [],
            created=datetime(2026, 1 + i % 6, 1, tzinfo=UTC), auto_link=False)
    query, filters = _vec("deploy pipeline migrations"), Filters(tags=("ops",), active_at=NOW)
    expected = _uids(vector_search(query, 4, filters))
    for chunk, point_max in ((2, 0), (4000, 0), (2, 500)):   # over-fetch, rowid IN, point lookups
        monkeypatch.setattr(semantic, "CANDIDATE_CHUNK", chunk)
        monkeypatch.setattr(semantic, "POINT_LOOKUP_MAX", point_max)
        assert _uids(vector_search(query, 4, filters)) == expected
    assert len(expected) == 4


def test_stored_vectors_come_from_the_cache_of_the_tables_model(mem):
    from memory import index
    from memory.search import vectors

    assert vectors.META_MODEL_KEY == index.META_MODEL
    node = mem("Dana's cat is called Pimenta", auto_link=False)
    row_id = NodeRow.objects.get(uid=node.id).id
    assert vectors.get_many([row_id])[row_id].tobytes() == vectors.get(row_id).tobytes()
