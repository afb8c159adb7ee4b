"""FTS5 over title, content and tags, external content on memory_noderow.

Column order is (title, content, tags_text) with no leading id column, so
bm25(node_fts, 10.0, 1.0, 3.0) really weighs the title 10x (the original put
its 10.0 on an UNINDEXED id column; reference §1.3).
"""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

FTS_SQL = [
    """CREATE VIRTUAL TABLE node_fts USING fts5(
           title, content, tags_text, content='memory_noderow', content_rowid='id',
           tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER node_fts_ai AFTER INSERT ON memory_noderow BEGIN
           INSERT INTO node_fts(rowid, title, content, tags_text)
           VALUES (new.id, new.title, new.content, new.tags_text);
       END""",
    """CREATE TRIGGER node_fts_ad AFTER DELETE ON memory_noderow BEGIN
           INSERT INTO node_fts(node_fts, rowid, title, content, tags_text)
           VALUES ('delete', old.id, old.title, old.content, old.tags_text);
       END""",
    """CREATE TRIGGER node_fts_au AFTER UPDATE OF title, content, tags_text ON memory_noderow BEGIN
           INSERT INTO node_fts(node_fts, rowid, title, content, tags_text)
           VALUES ('delete', old.id, old.title, old.content, old.tags_text);
           INSERT INTO node_fts(rowid, title, content, tags_text)
           VALUES (new.id, new.title, new.content, new.tags_text);
       END""",
]
FTS_REVERSE = [
    "DROP TRIGGER IF EXISTS node_fts_au",
    "DROP TRIGGER IF EXISTS node_fts_ad",
    "DROP TRIGGER IF EXISTS node_fts_ai",
    "DROP TABLE IF EXISTS node_fts",
]


# PostgreSQL: a stored generated tsvector on the row itself (title A, content B, tags C; memory/backends/postgres.py
# weighs them like BM25's 10 : 1 : 3) and a GIN index; no triggers are needed. ASCII punctuation becomes a space
# first, so "tests/billing" or "about_self" are words as FTS5's unicode61 splits them (the default parser would
# keep a path or a snake_case name as one token).
PG_FTS_SQL = [
    """ALTER TABLE memory_noderow ADD COLUMN fts tsvector GENERATED ALWAYS AS (
           setweight(to_tsvector('english', regexp_replace(coalesce(title, ''), '[!-/:-@\\[-`{-~]', ' ', 'g')), 'A') ||
           setweight(to_tsvector('english', regexp_replace(coalesce(content, ''), '[!-/:-@\\[-`{-~]', ' ', 'g')), 'B') ||
           setweight(to_tsvector('english', regexp_replace(coalesce(tags_text, ''), '[!-/:-@\\[-`{-~]', ' ', 'g')), 'C')) STORED""",
    "CREATE INDEX node_fts_gin ON memory_noderow USING gin (fts)",
]
PG_FTS_REVERSE = ["DROP INDEX IF EXISTS node_fts_gin", "ALTER TABLE memory_noderow DROP COLUMN IF EXISTS fts"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]
    operations = [VendorSQL("sqlite", FTS_SQL, FTS_REVERSE), VendorSQL("postgresql", PG_FTS_SQL, PG_FTS_REVERSE)]
