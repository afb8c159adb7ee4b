"""FTS5 over evidence text, external content on memory_evidencerow (kept in step by triggers, like node_fts)."""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

FTS_SQL = [
    """CREATE VIRTUAL TABLE evidence_fts USING fts5(
           text, content='memory_evidencerow', content_rowid='id',
           tokenize='porter unicode61 remove_diacritics 2')""",
    """CREATE TRIGGER evidence_fts_ai AFTER INSERT ON memory_evidencerow BEGIN
           INSERT INTO evidence_fts(rowid, text) VALUES (new.id, new.text);
       END""",
    """CREATE TRIGGER evidence_fts_ad AFTER DELETE ON memory_evidencerow BEGIN
           INSERT INTO evidence_fts(evidence_fts, rowid, text) VALUES ('delete', old.id, old.text);
       END""",
    """CREATE TRIGGER evidence_fts_au AFTER UPDATE OF text ON memory_evidencerow BEGIN
           INSERT INTO evidence_fts(evidence_fts, rowid, text) VALUES ('delete', old.id, old.text);
           INSERT INTO evidence_fts(rowid, text) VALUES (new.id, new.text);
       END""",
]
FTS_REVERSE = [
    "DROP TRIGGER IF EXISTS evidence_fts_au",
    "DROP TRIGGER IF EXISTS evidence_fts_ad",
    "DROP TRIGGER IF EXISTS evidence_fts_ai",
    "DROP TABLE IF EXISTS evidence_fts",
]

PG_FTS_SQL = [
    """ALTER TABLE memory_evidencerow ADD COLUMN fts tsvector
           GENERATED ALWAYS AS (to_tsvector('english', regexp_replace(coalesce(text, ''), '[!-/:-@\\[-`{-~]', ' ', 'g'))) STORED""",
    "CREATE INDEX evidence_fts_gin ON memory_evidencerow USING gin (fts)",
]
PG_FTS_REVERSE = ["DROP INDEX IF EXISTS evidence_fts_gin", "ALTER TABLE memory_evidencerow DROP COLUMN IF EXISTS fts"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0005_trust")]
    operations = [VendorSQL("sqlite", FTS_SQL, FTS_REVERSE), VendorSQL("postgresql", PG_FTS_SQL, PG_FTS_REVERSE)]
