"""bench/pg_keyword.py's measuring pass on a small table of the test database (PostgreSQL only)."""

from __future__ import annotations

import pytest
from django.db import connection

from bench import pg
from bench.pg_keyword import STATS_TRIGGERS, VARIANTS, fill, measure, report, write_cost
from memory.search.fts import fts_query
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]

TEXTS = [("Boat storage", "The harbour keeps boats over winter in the big shed.", "harbour"),
         ("Crane booking", "Book the crane a week ahead: the harbour master sets the slots for boats.", ""),
         ("Club dinner", "The annual dinner is in the clubhouse, not at the harbour.", "dinner")]


def test_the_bench_measures_every_variant_and_finds_before_and_after_equal():
    queries = [fts_query(t) for t in ("harbour boats", "crane dinner slots", "winter")]
    with connection.cursor() as cur:
        fill(cur, TEXTS, 0, 30)
        cur.execute("SELECT count(*) FROM memory_noderow")
        assert cur.fetchone()[0] == 30
        stats = measure(cur, pg.server_cpu(connection), queries, 5)

    assert stats["differ"] == {"and": 0, "or": 0}
    assert (stats[("n", "and")], stats[("n", "or")]) == (3, 2)  # one-token queries have no OR pass
    assert all(len(stats[(v, "or")]["exec"]) == len(stats[(v, "or")]["client"]) == 2 for v in VARIANTS)
    lines = report(30, stats, (1.0, 1.0), 0.1)
    assert lines[0].startswith("30 rows: 3 AND queries, 2 OR queries;")
    assert len(lines) == 3 + 2 * len(VARIANTS)


def test_the_write_pass_leaves_the_table_its_stats_and_the_triggers_as_they_were():
    with connection.cursor() as cur:
        fill(cur, TEXTS, 0, 6)
        costs = write_cost(cur, pg.server_cpu(connection), 3)
        cur.execute("SELECT count(*), sum(fts_len) FROM memory_noderow")
        truth = cur.fetchone()
        cur.execute("SELECT n, total_len FROM fts_stats WHERE tbl = 'memory_noderow'")
        stats = cur.fetchone()
        cur.execute("SELECT count(*) FROM pg_trigger WHERE tgname = ANY(%s) AND tgenabled = 'O'",
                    [list(STATS_TRIGGERS)])
        enabled = cur.fetchone()[0]

    assert list(costs) == ["enabled", "disabled", "enabled again"]
    assert all(list(row) == ["insert", "update", "delete"] for row in costs.values())
    assert truth[0] == 6 and stats == truth
    assert enabled == len(STATS_TRIGGERS)
