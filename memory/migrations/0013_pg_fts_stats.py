"""PostgreSQL only: each full-text table's row count and total length kept in one row, so a keyword query no longer
scans the whole table for them (session 27).

The keyword leg's BM25 (memory/backends/pg_bm25.py) needs N, the table's rows, and avgdl, the mean of `fts_len`
(migration 0012). Session 26's query took both with count(*) and avg(fts_len) over every row, once per query: the
cost grew with the table. `fts_stats(tbl, n, total_len)` holds them for memory_noderow and memory_evidencerow, filled
here from the rows and kept by triggers in the writing transaction itself, so a reader sees the totals of exactly the
rows its snapshot sees (a rollback takes its change back with it):
- INSERT and DELETE: one statement-level trigger each with a transition table (a multi-row INSERT of the indexer
  updates the row once, not once per row; a statement that touched no row does not update it);
- UPDATE: a row-level trigger, only WHEN the row's `fts_len` changed (an update of access counts or hashes never
  touches the stats row);
- TRUNCATE (Django's test flush): the row goes back to 0.
Concurrent writers: the UPDATE of the stats row takes its row lock until commit, so two writers of one table queue
there (every write unit on PostgreSQL already holds the documents store's advisory lock, memory/documents.py), and
read committed re-reads the row after the wait, so no change is lost. A later migration that redefines `fts_len`
(an ALTER TABLE fires no trigger) must refill this table. SQLite does not change: FTS5 keeps its own totals.
"""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

TABLES = ("memory_noderow", "memory_evidencerow")

PG_SQL = [
    "CREATE TABLE fts_stats (tbl text PRIMARY KEY, n bigint NOT NULL, total_len bigint NOT NULL)",
    *(f"INSERT INTO fts_stats SELECT '{t}', count(*), coalesce(sum(fts_len), 0) FROM {t}" for t in TABLES),
    """CREATE FUNCTION fts_stats_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE fts_stats s SET n = s.n + d.n, total_len = s.total_len + d.len
         FROM (SELECT count(*) AS n, coalesce(sum(fts_len), 0) AS len FROM new_rows) d
         WHERE s.tbl = TG_TABLE_NAME AND d.n > 0;
         RETURN NULL;
       END $$""",
    """CREATE FUNCTION fts_stats_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE fts_stats s SET n = s.n - d.n, total_len = s.total_len - d.len
         FROM (SELECT count(*) AS n, coalesce(sum(fts_len), 0) AS len FROM old_rows) d
         WHERE s.tbl = TG_TABLE_NAME AND d.n > 0;
         RETURN NULL;
       END $$""",
    """CREATE FUNCTION fts_stats_updated() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE fts_stats SET total_len = total_len + NEW.fts_len - OLD.fts_len WHERE tbl = TG_TABLE_NAME;
         RETURN NULL;
       END $$""",
    """CREATE FUNCTION fts_stats_truncated() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
         UPDATE fts_stats SET n = 0, total_len = 0 WHERE tbl = TG_TABLE_NAME;
         RETURN NULL;
       END $$""",
    *(sql for t in TABLES for sql in (
        f"CREATE TRIGGER {t}_stats_ai AFTER INSERT ON {t} REFERENCING NEW TABLE AS new_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_inserted()",
        f"CREATE TRIGGER {t}_stats_ad AFTER DELETE ON {t} REFERENCING OLD TABLE AS old_rows "
        f"FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_deleted()",
        f"CREATE TRIGGER {t}_stats_au AFTER UPDATE ON {t} FOR EACH ROW "
        f"WHEN (OLD.fts_len IS DISTINCT FROM NEW.fts_len) EXECUTE FUNCTION fts_stats_updated()",
        f"CREATE TRIGGER {t}_stats_at AFTER TRUNCATE ON {t} FOR EACH STATEMENT EXECUTE FUNCTION fts_stats_truncated()",
    )),
]
PG_REVERSE = [
    *(f"DROP TRIGGER IF EXISTS {t}_stats_{suffix} ON {t}" for t in TABLES for suffix in ("ai", "ad", "au", "at")),
    *(f"DROP FUNCTION IF EXISTS fts_stats_{event}()" for event in ("inserted", "deleted", "updated", "truncated")),
    "DROP TABLE IF EXISTS fts_stats",
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0012_pg_fts_len")]
    operations = [VendorSQL("postgresql", PG_SQL, PG_REVERSE)]
