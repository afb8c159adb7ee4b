"""PostgreSQL only: each row's length in tokens, so the keyword leg can rank by FTS5's own BM25 (session 26).

FTS5's bm25 divides a row's term frequency by k1 (1 - b + b |D| / avgdl), |D| the row's tokens over all its columns
and avgdl their mean over the table; FTS5 keeps both. `fts_len` is that |D| on PostgreSQL: a stored generated
integer on memory_noderow (title, content and tags_text) and memory_evidencerow (text), the runs of characters
between whitespace and ASCII punctuation, stop words counted, as FTS5's unicode61 tokenizer counts them. The
ranking itself is memory/backends/pg_bm25.py. SQLite does not change.
"""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

_SPLIT = r"'[\s!-/:-@\[-`{-~]+'"  # whitespace and the ASCII punctuation the tsvector columns space out (0011)


def _length(text: str) -> str:
    return f"cardinality(array_remove(regexp_split_to_array({text}, {_SPLIT}), ''))"


_NODE = "coalesce(title, '') || ' ' || coalesce(content, '') || ' ' || coalesce(tags_text, '')"
_EVIDENCE = "coalesce(text, '')"
PG_SQL = [
    f"ALTER TABLE memory_noderow ADD COLUMN fts_len integer GENERATED ALWAYS AS ({_length(_NODE)}) STORED",
    f"ALTER TABLE memory_evidencerow ADD COLUMN fts_len integer GENERATED ALWAYS AS "
    f"({_length(_EVIDENCE)}) STORED",
]
PG_REVERSE = ["ALTER TABLE memory_noderow DROP COLUMN IF EXISTS fts_len",
              "ALTER TABLE memory_evidencerow DROP COLUMN IF EXISTS fts_len"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0011_fts_unaccent")]
    operations = [VendorSQL("postgresql", PG_SQL, PG_REVERSE)]
