"""The vector change log: every write to an index row appends (generation, row id) in the same transaction.

Each process's in-process vector matrix (memory/search/matrix.py) compares the newest generation with its own on
every query and loads only the rows logged since; row id 0 means "everything changed" (a new vector table).
Triggers keep the log complete whatever code writes the rows; AUTOINCREMENT keeps generations from being reused.
"""

from django.db import migrations

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


class Migration(migrations.Migration):
    dependencies = [("memory", "0006_evidence_fts")]
    operations = [migrations.RunSQL(LOG_SQL, LOG_REVERSE)]
