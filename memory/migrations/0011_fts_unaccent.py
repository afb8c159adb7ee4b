"""PostgreSQL only: the full-text columns fold accents, as SQLite's FTS5 (`unicode61 remove_diacritics 2`) does.

Before, the tsvectors used the plain `english` configuration, so on a team server "cafe" did not find "café" nor
"cooperatie" "coöperatie" (and the reverse), while on a laptop both did (session 22, review8). The `ormah_english`
configuration is `english` with the `unaccent` dictionary (PostgreSQL's contrib, a trusted extension) in front of
the English stemmer for words holding a non-ASCII letter, the mapping PostgreSQL's unaccent documentation gives;
ASCII words are stemmed exactly as before. Both generated columns are re-added with it (a rewrite of
memory_noderow and memory_evidencerow: one pass over the table, under its lock) and their GIN indexes rebuilt;
memory/backends/postgres.py queries with the same configuration.
"""

from django.db import migrations

from memory.backends.migration_ops import VendorSQL

_TEXT = "regexp_replace(coalesce({col}, ''), '[!-/:-@\\[-`{{-~]', ' ', 'g')"


def node_sql(config: str) -> list[str]:
    """memory_noderow's generated tsvector (title A, content B, tags C) in `config`, and its GIN index."""
    node = " ||\n           ".join(
        f"setweight(to_tsvector('{config}', {_TEXT.format(col=col)}), '{weight}')"
        for col, weight in (("title", "A"), ("content", "B"), ("tags_text", "C")))
    return [
        "DROP INDEX IF EXISTS node_fts_gin",
        "ALTER TABLE memory_noderow DROP COLUMN IF EXISTS fts",
        f"ALTER TABLE memory_noderow ADD COLUMN fts tsvector GENERATED ALWAYS AS (\n           {node}) STORED",
        "CREATE INDEX node_fts_gin ON memory_noderow USING gin (fts)",
    ]


def evidence_sql(config: str) -> list[str]:
    """memory_evidencerow's generated tsvector in `config`, and its GIN index."""
    return [
        "DROP INDEX IF EXISTS evidence_fts_gin",
        "ALTER TABLE memory_evidencerow DROP COLUMN IF EXISTS fts",
        f"ALTER TABLE memory_evidencerow ADD COLUMN fts tsvector GENERATED ALWAYS AS "
        f"(to_tsvector('{config}', {_TEXT.format(col='text')})) STORED",
        "CREATE INDEX evidence_fts_gin ON memory_evidencerow USING gin (fts)",
    ]


CONFIG_SQL = [
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    "DROP TEXT SEARCH CONFIGURATION IF EXISTS ormah_english",
    "CREATE TEXT SEARCH CONFIGURATION ormah_english (COPY = english)",
    "ALTER TEXT SEARCH CONFIGURATION ormah_english ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem",
]
PG_SQL = [*CONFIG_SQL, *node_sql("ormah_english"), *evidence_sql("ormah_english")]
PG_REVERSE = [*node_sql("english"), *evidence_sql("english"), "DROP TEXT SEARCH CONFIGURATION IF EXISTS ormah_english"]


class Migration(migrations.Migration):
    dependencies = [("memory", "0010_fts_vocab")]
    operations = [VendorSQL("postgresql", PG_SQL, PG_REVERSE)]
