"""What the recall scorer reads from the index means the same on both engines (found by bench/pg_beside.py).

The scorer weighs a query's words by their IDF from `doc_counts`. PostgreSQL's `english` configuration drops its
stop words ("his", "her", "after", ...) from every tsvector and tsquery, a longer list than the project's own, so
counting such a word through the tsvector found no memory at all: the commonest words got the highest IDF, as if
they were the rarest. A third of the LoCoMo dev questions have one.
"""

from __future__ import annotations

import pytest

from bench.pg import database_url
from memory.ranking.features import idf
from memory.search.candidates import DF_CAP, doc_counts, vocabulary_share
from tests.postgres import postgres_only


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_postgres_stop_word_counts_as_common_not_as_unknown(mem):
    for i in range(3):
        mem(f"Dana tuned his guitar before gig number {i}", auto_link=False)
    mem("The violin stayed in its case", auto_link=False)

    counts = doc_counts(["his", "violin", "zeppelin"])

    assert counts["violin"] == 1 and counts["zeppelin"] == 0
    assert counts["his"] >= 3  # as common as any word can be: PostgreSQL keeps no count of it
    assert idf(counts["his"], 4) < idf(counts["violin"], 4)
    assert vocabulary_share(["his"], counts) == 1.0


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_word_that_is_no_stop_word_is_counted_exactly(mem):
    for i in range(4):
        mem(f"Deploy number {i} of the billing service", auto_link=False)

    assert doc_counts(["billing"]) == {"billing": 4}
    assert doc_counts(["billing"])["billing"] < DF_CAP


def test_a_scratch_database_keeps_the_server_socket_and_port():
    url = "postgres://postgres@/ormah?host=/tmp/ormah-pg.x&port=5433"

    assert database_url(url, "ormah_latency_10000") == \
        "postgres://postgres@/ormah_latency_10000?host=/tmp/ormah-pg.x&port=5433"
