"""The vector change log: every write to an index row appends (generation, row id) in the same transaction.

Each process's in-process vector matrix (memory/search/matrix.py) compares the newest generation with its own on
every query and loads only the rows logged since; row id 0 means "everything changed" (a new vector table).
Triggers keep the log complete whatever code writes the rows; AUTOINCREMENT keeps generations from being reused.
"""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

LOG_SQL = [
    "CREATE TABLE node_vec_log (gen INTEGER PRIMARY KEY AUTOINCREMENT, row_id INTEGER NOT NULL)",
    """CREATE TRIGGER node_vec_log_ai AFTER INSERT ON memory_noderow BEGIN
           INSERT INTO node_vec_log(row_id) VALUES (new.id);
       END""",
    """CREATE TRIGGER node_vec_log_au AFTER UPDATE OF type, tier, space, created, valid_until, embed_hash
       ON memory_noderow BEGIN
           INSERT INTO node_vec_log(row_id) VALUES (new.id);
       END""",
    """CREATE TRIGGER node_vec_log_ad AFTER DELETE ON memory_noderow BEGIN
           INSERT INTO node_vec_log(row_id) VALUES (old.id);
       END""",
    "INSERT INTO node_vec_log(row_id) VALUES (0)",
]
LOG_REVERSE = [
    "DROP TRIGGER IF EXISTS node_vec_log_ad",
    "DROP TRIGGER IF EXISTS node_vec_log_au",
    "DROP TRIGGER IF EXISTS node_vec_log_ai",
    "DROP TABLE IF EXISTS node_vec_log",
]

# PostgreSQL: the same log, plus the pgvector extension (node_vec is created by memory.search.vectors). The trigger
# takes a transaction-level advisory lock before it draws a generation, so generations commit in their order and a
# matrix that has read generation g can never later miss a smaller one committed after it.
PG_LOG_SQL = [
    "CREATE EXTENSION IF NOT EXISTS vector",
    "CREATE TABLE node_vec_log (gen BIGSERIAL PRIMARY KEY, row_id BIGINT NOT NULL)",
    """CREATE FUNCTION node_vec_log_row() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN
           PERFORM pg_advisory_xact_lock(7303017);
           IF TG_OP = 'DELETE' THEN
               INSERT INTO node_vec_log(row_id) VALUES (OLD.id);
           ELSE
               INSERT INTO node_vec_log(row_id) VALUES (NEW.id);
           END IF;
           RETURN NULL;
       END $$""",
    """CREATE TRIGGER node_vec_log_ai AFTER INSERT ON memory_noderow
       FOR EACH ROW EXECUTE FUNCTION node_vec_log_row()""",
    """CREATE TRIGGER node_vec_log_au AFTER UPDATE OF type, tier, space, created, valid_until, embed_hash
       ON memory_noderow FOR EACH ROW EXECUTE FUNCTION node_vec_log_row()""",
    """CREATE TRIGGER node_vec_log_ad AFTER DELETE ON memory_noderow
       FOR EACH ROW EXECUTE FUNCTION node_vec_log_row()""",
    "INSERT INTO node_vec_log(row_id) VALUES (0)",
]
PG_LOG_REVERSE = [
    "DROP TRIGGER IF EXISTS node_vec_log_ad ON memory_noderow",
    "DROP TRIGGER IF EXISTS node_vec_log_au ON memory_noderow",
    "DROP TRIGGER IF EXISTS node_vec_log_ai ON memory_noderow",
    "DROP FUNCTION IF EXISTS node_vec_log_row()",
    "DROP TABLE IF EXISTS node_vec_log",
]


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_evidence_fts")]
    operations = [VendorSQL("sqlite", LOG_SQL, LOG_REVERSE), VendorSQL("postgresql", PG_LOG_SQL, PG_LOG_REVERSE)]
