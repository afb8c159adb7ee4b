"""An fts5vocab table over node_fts (SQLite only): one row per token with the number of rows holding it, so the
document counts of many terms are one read (memory/backends/sqlite.py doc_counts) instead of a MATCH each."""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL


class Migration(migrations.Migration):
    dependencies = [("memory", "0009_mergehistoryrow_pending")]
    operations = [VendorSQL("sqlite", ["CREATE VIRTUAL TABLE node_fts_vocab USING fts5vocab(node_fts, row)"],
                            ["DROP TABLE IF EXISTS node_fts_vocab"])]
