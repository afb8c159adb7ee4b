"""The full-text leg on PostgreSQL beside FTS5 BM25, on the LoCoMo dev split: recall@5/10/30 of each, same tokens.

    python -m bench.pg_fulltext --url postgres://postgres@/scratch?host=DIR&port=N   (scripts/pg-cluster.sh)

Reads the stores bench/locomo.py cached (~/.cache/ormah-bench/locomo/<model>/conv-*/index.sqlite3; run it first),
so both engines rank the very same rows: FTS5 with the SQLite backend's bm25(10, 1, 3), and the PostgreSQL
backend's ranking (memory/backends/pg_bm25.py: FTS5's BM25 since session 26) over a table with the same generated
tsvector as migration 0011 and the same length column as migration 0012.
Each leg is fts_search's order without filters: rows with every token first, then rows with any token.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from pathlib import Path

from bench._common import DEFAULT_CACHE_DIR
from bench.locomo import CATEGORIES, KS, LIMIT, load_split, recall_at

PG_TABLE = "bench_noderow"


def _setup() -> None:
    os.environ.setdefault("ORMAH_HOME", str(DEFAULT_CACHE_DIR / "pg_fulltext_home"))
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    os.environ.pop("ORMAH_DATABASE_URL", None)
    import django

    django.setup()


def _two_passes(run, query) -> list[int]:
    found = [r for r, _ in run(query.all_of, True, LIMIT)] if query.all_of else []
    if len(found) < LIMIT and query.any_of:
        seen = set(found)
        found += [r for r, _ in run(query.any_of, False, LIMIT + len(found)) if r not in seen][:LIMIT - len(found)]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="a scratch PostgreSQL database with pgvector (it gets a table)")
    args = parser.parse_args(argv)
    _setup()
    import psycopg

    from memory.backends import pg_bm25, postgres, sqlite
    from memory.search.fts import fts_query

    stores = sorted(p for p in (DEFAULT_CACHE_DIR / "locomo").glob("*/conv-*") if (p / "built.json").is_file())
    by_id = {p.name: p for p in stores}
    convs = [c for c in load_split() if c.sample_id in by_id]
    if not convs:
        raise SystemExit("No cached LoCoMo stores: run `python -m bench.locomo` first.")
    url = args.url.replace("postgres://", "postgresql://", 1)
    weights = ", ".join(str(w) for w in sqlite.BM25_WEIGHTS)
    sums = {(leg, k): 0.0 for leg in ("bm25", "pg") for k in KS}
    n = 0
    with psycopg.connect(url, autocommit=True) as pg:
        for conv in convs:
            home = by_id[conv.sample_id]
            keymap = json.loads((home / "built.json").read_text())
            lite = sqlite3.connect(home / "index.sqlite3")
            rows = lite.execute("SELECT id, title, content, tags_text FROM memory_noderow").fetchall()
            pg.execute(f"DROP TABLE IF EXISTS {PG_TABLE}")
            pg.execute(f"CREATE TABLE {PG_TABLE} (id bigint PRIMARY KEY, title text, content text, tags_text text)")
            with pg.cursor() as cur:
                cur.executemany(f"INSERT INTO {PG_TABLE} VALUES (%s, %s, %s, %s)", rows)
            pg.execute(_fts_column(PG_TABLE))

            def bm25(expression, _all, limit, lite=lite):
                return lite.execute(f"SELECT rowid, -bm25(node_fts, {weights}) AS s FROM node_fts WHERE node_fts "
                                    f"MATCH ? ORDER BY s DESC, rowid LIMIT ?", [expression, limit]).fetchall()

            for q in conv.questions:
                query = fts_query(q.text)

                def ranked_pg(_expression, match_all, limit, query=query):
                    sql = pg_bm25.ranked_sql(PG_TABLE, "n", ["id"], "")
                    tokens = [postgres._PUNCTUATION.sub(" ", t) for t in query.tokens]
                    return pg.execute(sql, [tokens, postgres._websearch(query.tokens, match_all), limit]).fetchall()

                relevant = {keymap[e] for e in q.evidence}
                for leg, run in (("bm25", bm25), ("pg", ranked_pg)):
                    ranked = _two_passes(run, query)
                    for k in KS:
                        sums[(leg, k)] += recall_at(ranked, relevant, k)
                n += 1
            lite.close()
        pg.execute(f"DROP TABLE IF EXISTS {PG_TABLE}")
    print(f"LoCoMo dev, {len(convs)} conversations, {n} questions (categories {sorted(CATEGORIES)}), load "
          f"{os.getloadavg()[0]:.2f}")
    for leg, label in (("bm25", "FTS5 BM25 (SQLite)"), ("pg", "tsvector BM25 (PostgreSQL)")):
        print(f"{label:40s} " + "  ".join(f"R@{k} {sums[(leg, k)] / n:.3f}" for k in KS))
    return 0


def _fts_column(table: str) -> str:
    """Migration 0011's text search configuration, generated column and index, and 0012's length, on the bench
    table."""
    from importlib import import_module

    migration = import_module("memory.migrations.0011_fts_unaccent")
    length = import_module("memory.migrations.0012_pg_fts_len")
    sql = [*migration.CONFIG_SQL, *migration.node_sql("ormah_english"), length.PG_SQL[0]]
    return ";".join(s.replace("memory_noderow", table).replace("node_fts_gin", f"{table}_gin") for s in sql)


if __name__ == "__main__":
    sys.exit(main())
