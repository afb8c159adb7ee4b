"""The documents store: the memory files' bytes and versions in PostgreSQL, the canonical store several app hosts
share (memory/documents.py reads and writes it). Installed only when ORMAH_DATABASE_URL names a PostgreSQL server
(ormah_site/settings.py): on SQLite the folder is the truth and this app has no tables, no admin and no
migrations to run."""
