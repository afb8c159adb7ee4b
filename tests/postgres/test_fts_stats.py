"""The full-text tables' totals on PostgreSQL (migration 0013): `fts_stats` holds each table's rows and total
`fts_len`, kept by triggers, and the keyword leg ranks from it with the very scores of session 26's full scan."""

from __future__ import annotations

import threading
from datetime import datetime, timezone
from typing import TYPE_CHECKING

import pytest
from django.core.management import call_command
from django.db import connection, transaction

from bench.pg_keyword import BEFORE_SQL, fill
from memory.backends import pg_bm25, postgres
from memory.domain.requests import NodePatch
from memory.domain.trust_requests import EvidenceIn
from memory.models import NodeRow
from memory.search.fts import fts_query
from memory.services import evidence_record, evidence_sync, node_forget, node_update
from tests.postgres import postgres_only

if TYPE_CHECKING:
    import psycopg

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]

NODES, EVIDENCE = "memory_noderow", "memory_evidencerow"


def _stats(cur, table: str) -> tuple[int, int]:
    cur.execute("SELECT n, total_len FROM fts_stats WHERE tbl = %s", [table])
    return tuple(cur.fetchone())


def _truth(cur, table: str) -> tuple[int, int]:
    cur.execute(f"SELECT count(*), coalesce(sum(fts_len), 0) FROM {table}")
    return tuple(cur.fetchone())


def _kept(table: str) -> tuple[int, int]:
    """The stats row, checked against the table's own count and sum."""
    with connection.cursor() as cur:
        stats = _stats(cur, table)
        assert stats == _truth(cur, table)
    return stats


def _other_connection() -> psycopg.Connection:
    import psycopg  # here, not at the top: `make test` on SQLite collects this file without the postgres extra

    s = connection.settings_dict
    return psycopg.connect(dbname=s["NAME"], user=s["USER"], password=s["PASSWORD"] or None,
                           host=s["HOST"] or None, port=s["PORT"] or None)


def test_the_stats_follow_remember_edit_and_forget(mem):
    assert _kept(NODES) == (0, 0)
    first = mem("The harbour keeps boats over winter in the big shed.", title="Boat storage", auto_link=False)
    mem("Boats are lifted out in November.", title="Lift out", tags=["boats", "winter"], auto_link=False)
    assert _kept(NODES) == (2, 2 + 10 + 2 + 6 + 2)

    node_update(ref=first.id, patch=NodePatch(content="The harbour keeps boats in the shed."))
    assert _kept(NODES) == (2, 2 + 7 + 2 + 6 + 2)

    node_forget(ref=first.id)
    assert _kept(NODES) == (1, 2 + 6 + 2)


def test_an_update_that_keeps_the_length_does_not_touch_the_stats_row(mem):
    node = mem("Fees are due in January.", title="Fees", auto_link=False)
    with connection.cursor() as cur:
        cur.execute("SELECT xmin::text FROM fts_stats WHERE tbl = %s", [NODES])
        before = cur.fetchone()[0]
        NodeRow.objects.filter(uid=node.id).update(access_count=7, embed_hash="x")
        cur.execute("SELECT xmin::text FROM fts_stats WHERE tbl = %s", [NODES])
        assert cur.fetchone()[0] == before
    assert _kept(NODES) == (1, 1 + 5)


def test_evidence_rows_have_their_own_stats(home):
    now = datetime(2026, 11, 30, 6, 0, tzinfo=timezone.utc)
    texts = ["The crane lifts boats out in November", "Dinner at the clubhouse on Friday"]
    evidence_record(items=[EvidenceIn(kind="user_message", text=t, session_id="s-1") for t in texts], now=now)
    evidence_sync()

    assert _kept(EVIDENCE) == (2, 7 + 6)
    assert _kept(NODES) == (0, 0)


def test_a_rolled_back_write_takes_its_change_of_the_stats_back(mem):
    node = mem("A boat longer than twelve metres needs a winter mooring.", auto_link=False)
    mem("The annual dinner is in the clubhouse.", auto_link=False)
    kept = _kept(NODES)

    with pytest.raises(RuntimeError), transaction.atomic():
        NodeRow.objects.filter(uid=node.id).update(content="Shorter now.")
        NodeRow.objects.exclude(uid=node.id).delete()
        with connection.cursor() as cur:
            assert _stats(cur, NODES) == _truth(cur, NODES)  # the writer sees its own totals
            assert _stats(cur, NODES)[0] == 1
        raise RuntimeError("roll back")

    assert _kept(NODES) == kept


def test_truncate_empties_the_stats(mem):
    mem("Book the crane a week ahead.", auto_link=False)
    with connection.cursor() as cur:
        cur.execute(f"TRUNCATE {NODES} CASCADE")
    assert _kept(NODES) == (0, 0)


def _waiting(pid: int) -> bool:
    with connection.cursor() as cur:
        cur.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cur.fetchone()
    return row is not None and row[0] == "Lock"


def test_two_writers_queue_on_the_stats_row_and_lose_no_change(mem):
    """Writer A edits a row (its fts_len changes) and holds its transaction open; writer B's delete of another row
    waits on the stats row until A commits, then re-reads it: both changes are counted. A reader in between sees the
    totals of the rows its snapshot sees."""
    a_node = mem("The harbour master sets the slots for boats.", title="Slots", auto_link=False)
    b_node = mem("A late payment adds ten percent.", title="Fees", auto_link=False)
    ids = {n.id: NodeRow.objects.get(uid=n.id).id for n in (a_node, b_node)}
    writer_a, writer_b, reader = _other_connection(), _other_connection(), _other_connection()
    try:
        writer_a.execute(f"UPDATE {NODES} SET content = content || ' Call ahead on Sunday.' WHERE id = %s",
                         [ids[a_node.id]])
        b_pid = writer_b.execute("SELECT pg_backend_pid()").fetchone()[0]
        writer_b.commit()

        def delete_b():
            writer_b.execute(f"DELETE FROM {NODES} WHERE id = %s", [ids[b_node.id]])
            writer_b.commit()

        thread = threading.Thread(target=delete_b)
        thread.start()
        for _ in range(10_000):
            if _waiting(b_pid) or not thread.is_alive():
                break
        assert _waiting(b_pid)  # B queues on the stats row A holds
        with reader.cursor() as cur:
            assert _stats(cur, NODES) == _truth(cur, NODES) == (2, 1 + 8 + 1 + 6)
        reader.commit()

        writer_a.commit()
        thread.join()
    finally:
        for conn in (writer_a, writer_b, reader):
            conn.close()

    assert _kept(NODES) == (1, 1 + 8 + 4)


QUERIES = ["boats harbour winter", "crane booking slots", "dinner clubhouse", "boat_length metres",
           "fees payment january", "mooring", "the"]


@pytest.mark.parametrize("limit", [1, 4, 20, 100])
@pytest.mark.parametrize("match_all", [True, False])
def test_scores_equal_the_full_scan_ranking(match_all, limit):
    """The ranking from the stats row, with the rows below the bar left unranked, gives session 26's rows and
    scores (its count(*) and avg(fts_len) scan, every match ranked) to the last bit, on a table of copies where many
    scores tie; a limit of 100 is more than any query matches (no bar)."""
    texts = [("Boat storage", "The harbour keeps boats over winter in the big shed.", "harbour"),
             ("Crane booking", "Book the crane a week ahead: the harbour master sets the slots for boats.", ""),
             ("Club dinner", "The annual dinner is in the clubhouse, not at the harbour.", "dinner"),
             ("Fees", "Fees are due in January; a late payment adds ten percent.", ""),
             ("Mooring rules", "A boat longer than twelve metres needs a winter mooring.", "mooring boats"),
             ("Boat length", "The boat length column holds metres; boat length boat length.", "")]
    before = BEFORE_SQL.format(config=pg_bm25.CONFIG, table=NODES, idf_min=pg_bm25.IDF_MIN, k1=pg_bm25.K1,
                               one_b=1.0 - pg_bm25.B, b=pg_bm25.B, k1_1=pg_bm25.K1 + 1.0, scale=pg_bm25.SCALE,
                               weights=pg_bm25.RANK_WEIGHTS)
    after = pg_bm25.ranked_sql(NODES, "n", ["id"], "")
    with connection.cursor() as cur:
        fill(cur, texts, 0, 6 * 7)
        cur.execute(f"DELETE FROM {NODES} WHERE id % 5 = 0")  # not whole copies: an uneven average
        compared = 0
        for text in QUERIES:
            query = fts_query(text)
            args = [[postgres._PUNCTUATION.sub(" ", t) for t in query.tokens],
                    postgres._websearch(query.tokens, match_all), limit]
            cur.execute(before, args)
            expected = cur.fetchall()
            cur.execute(after, args)
            assert cur.fetchall() == expected
            compared += len(expected)
    assert compared >= min(limit * 4, 25)


def test_the_migration_counts_the_rows_already_there_and_goes_back_cleanly():
    """Upgrading a store that has rows: 0013 fills the stats from them; unapplying it drops the table and triggers."""
    texts = [("Boat storage", "The harbour keeps boats over winter in the big shed.", "harbour"),
             ("Fees", "Fees are due in January.", "")]
    try:
        call_command("migrate", "memory", "0012", verbosity=0)
        with connection.cursor() as cur:
            cur.execute("SELECT to_regclass('fts_stats') IS NULL, count(*) FROM pg_trigger WHERE tgname LIKE %s",
                        ["memory_%_stats_%"])
            assert cur.fetchone() == (True, 0)
            fill(cur, texts, 0, 6)
            cur.execute(f"DELETE FROM {NODES} WHERE uid = 'bench-1-2'")  # one "Fees" copy of three
        call_command("migrate", "memory", verbosity=0)
    finally:
        call_command("migrate", verbosity=0)

    assert _kept(NODES) == (5, 3 * (2 + 10 + 1) + 2 * (1 + 5))
    assert _kept(EVIDENCE) == (0, 0)


@pytest.mark.parametrize("match_all", [True, False])
def test_a_filtered_query_ranks_the_best_rows_that_pass_the_filter(match_all):
    """With a `where` (the filters' joined query), the bar is set among the rows passing it: the best `limit` of
    them, as the whole ranking with no bar orders them."""
    texts = [("Boat storage", "The harbour keeps boats over winter in the big shed.", "harbour"),
             ("Crane booking", "Book the crane a week ahead: the harbour master sets the slots for boats.", ""),
             ("Mooring rules", "A boat longer than twelve metres needs a winter mooring.", "mooring boats")]
    with connection.cursor() as cur:
        fill(cur, texts, 0, 3 * 20)
    query = fts_query("boats harbour winter")
    everything = postgres.node_fulltext(query, match_all=match_all, limit=1000)
    assert 20 <= len(everything) < 1000  # no bar: fewer rows match than the limit

    for limit in (1, 3, 10):
        found = postgres.node_fulltext(query, match_all=match_all, limit=limit, where="n.id %% 3 = %s", params=[1])
        assert found == [(r, s) for r, s in everything if r % 3 == 1][:limit]
