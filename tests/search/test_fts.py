"""FTS5 leg: query building (every token quoted), BM25 column weights, filters, and fuzzing with raw text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.search import Filters, fts_query, fts_search


@pytest.mark.parametrize(("text", "all_of", "any_of"), [
    ("SQLITE_BUSY", '"sqlite_busy"', None),
    ("which database do we use?", '"database" AND "use"', '"database" OR "use"'),
    ("where do I live?", '"live" AND "about_self"', '"live" OR "about_self"'),
    ("what's my cat called?", '"cat" AND "called" AND "about_self"', '"cat" OR "called" OR "about_self"'),
    ("how do I ship a release?", '"ship" AND "release"', '"ship" OR "release"'),  # procedural: not about the user
    ('say "AND" OR NOT near(x y)', '"say" AND "near"', '"say" OR "near"'),
    ("the of to", '"the" AND "of" AND "to"', '"the" OR "of" OR "to"'),   # only stop words: keep them
    ("I", None, None),
    ("?!", None, None),
    ("issue #212", '"issue" AND "212"', '"issue" OR "212"'),
    ("col:umn^ *star* -minus", '"col" AND "umn" AND "star" AND "minus"', '"col" OR "umn" OR "star" OR "minus"'),
])
def test_fts_query_quotes_every_token(text, all_of, any_of):
    query = fts_query(text)
    assert (query.all_of, query.any_of) == (all_of, any_of)


def test_title_match_outranks_content_match(mem):
    body = mem("Notes from the cluster upgrade: drained nodes one by one, then kubernetes came back.",
               title="Weekly notes", auto_link=False)
    titled = mem("Drained the nodes one by one and waited for the control plane.",
                 title="Kubernetes upgrade", auto_link=False)
    ranked = fts_search("kubernetes", 10)
    assert [h.rank for h in ranked] == [1, 2]
    assert ranked[0].row_id != ranked[1].row_id
    from memory.models import NodeRow
    assert NodeRow.objects.get(id=ranked[0].row_id).uid == titled.id
    assert NodeRow.objects.get(id=ranked[1].row_id).uid == body.id


def test_tags_are_searchable(mem):
    node = mem("Dana lives in Lisbon", tags=["home"], about_self=True, auto_link=False)
    from memory.models import NodeRow
    assert [NodeRow.objects.get(id=h.row_id).uid for h in fts_search("about_self home", 5)] == [node.id]


def test_and_first_then_or_hits_after_them(mem):
    both = mem("Postgres vacuum settings for the billing database", auto_link=False)
    one = mem("Vacuum the living room on Saturdays", auto_link=False)
    from memory.models import NodeRow
    uids = [NodeRow.objects.get(id=h.row_id).uid for h in fts_search("postgres vacuum", 10)]
    assert uids == [both.id, one.id]


def test_filters_apply_inside_the_query(mem):
    mem("Deploy with make release", space="billing", type="procedure", auto_link=False)
    garden = mem("Deploy with the OTA script", space="garden", type="procedure", auto_link=False)
    from memory.models import NodeRow
    hits = fts_search("deploy", 1, Filters(spaces=("garden",)))
    assert [NodeRow.objects.get(id=h.row_id).uid for h in hits] == [garden.id]
    assert fts_search("deploy", 5, Filters(types=("fact",))) == []
    assert fts_search("deploy", 5, Filters(spaces=())) == []


@pytest.fixture
def indexed(mem):
    """One memory, so MATCH runs against a real index."""
    return mem('Quote "this" AND that: NEAR(a b) * ^ col:value -minus', auto_link=False)


def _no_fts_failure(caplog) -> None:
    assert not [r for r in caplog.records if r.getMessage().startswith("FTS query failed")]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
def test_raw_user_text_never_raises_nor_fails_in_fts5(indexed, caplog, text):
    fts_search(text, 5)
    _no_fts_failure(caplog)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(alphabet=st.sampled_from(list('"*^:()-+ ANDORNOTNEAR{}[]\'\\,.;0123456789_')), max_size=80))
def test_fts_syntax_characters_never_raise_nor_fail_in_fts5(indexed, caplog, text):
    fts_search(text, 5)
    _no_fts_failure(caplog)
