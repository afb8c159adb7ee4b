"""FTS5's BM25 computed on PostgreSQL: the keyword leg's SQL for memory/backends/postgres.py (session 26).

The recall scorer and the whisper gate read the keyword score relative to the query's best (`bm25_rel`) and its
rank, fitted on SQLite's FTS5. `ts_rank` adds repeated words and columns on another scale, so PostgreSQL ranks by
the same formula as fts5_aux.c's bm25 instead:

    score = sum over the query's tokens of idf x f (k1 + 1) / (f + k1 (1 - b + b |D| / avgdl)),  k1 = 1.2, b = 0.75
    idf = ln((N - df + 0.5) / (df + 0.5)), 1e-6 when that is not above 0

- N the table's rows, df the rows matching the token (the GIN index answers);
- f the token's occurrences in the row weighted by column, as FTS5's bm25(10, 1, 3) weighs them (title A 10, content
  B 1, tags C 3; evidence text D 1): `ts_rank_cd` with normalisation 0 is exactly that sum for a one-word query
  (each occurrence is a cover of one position, worth its weight), and for a phrase (a token holding punctuation,
  "boat_length") the phrase's occurrences, as FTS5 counts them; its weights are tenths of these, times 10 here;
- |D| the row's `fts_len` (migration 0012: its tokens over all columns, stop words counted) and avgdl their mean.
N and the sum of `fts_len` are read from the `fts_stats` row of the table, kept by triggers in each writing
transaction (migration 0013, session 27): no scan of the whole table per query. ts_rank_cd runs only for the tokens
a row matches (`@@`, cheaper; a token it does not match weighs 0 either way). And only rows that can reach the
LIMIT are ranked: a token adds idf x f (k1 + 1) / (f + k) < idf x (k1 + 1) to a row's score, so each matching row
has a ceiling, (k1 + 1) x the idf of the tokens it holds; the `limit` rows with the highest ceilings are ranked
first, and the last of their scores is a bar that `limit` rows already reach: a row whose ceiling is below it
cannot be among the best and is never ranked (the bar is -infinity when fewer rows match). The answer is the full
ranking's, row for row and score for score: session 26's statement to the bit (tests/postgres/test_fts_stats.py;
bench/pg_keyword.py runs both on every query).
Differences left: the English stemmer and stop words are PostgreSQL's (a stop word finds nothing), and PostgreSQL
keeps at most 256 positions of a word in a row.
"""

from __future__ import annotations

from collections.abc import Sequence

CONFIG = "ormah_english"  # english with unaccent in front of the stemmer (migration 0011), as FTS5 folds accents
K1 = 1.2
B = 0.75
IDF_MIN = 1e-6
# ts_rank_cd's weights {D, C, B, A}, tenths of FTS5's column weights (ts_rank_cd takes none above 1): title A 10,
# content B 1, tags C 3; evidence text D 1
RANK_WEIGHTS = "'{0.1, 0.3, 0.1, 1.0}'"
SCALE = 10
STATS_TABLE = "fts_stats"  # (tbl, n, total_len) per full-text table, kept by triggers (migration 0013)


def _score(row: str) -> str:
    """The BM25 score of the CTE row `row` (its `fts` and `k`) over the query's tokens `s` (their `tq` and `idf`)."""
    return f"""(SELECT coalesce(sum(s.idf * t.f * {K1 + 1.0} / (t.f + {row}.k)), 0) FROM s CROSS JOIN LATERAL
                (SELECT CASE WHEN {row}.fts @@ s.tq THEN round({SCALE} * ts_rank_cd({RANK_WEIGHTS}, {row}.fts, s.tq, 0))
                             ELSE 0 END AS f) t)"""


def ranked_sql(table: str, alias: str, columns: Sequence[str], where: str) -> str:
    """Rows of `table` matching the query string, with `columns` and their BM25 score, best first.

    Parameters in order: the tokens (text[]), the websearch_to_tsquery string of the match, the `where` parameters,
    the limit. `table` has `fts` (tsvector) and `fts_len`; `columns` include `id`."""
    selected = ", ".join(f"{alias}.{c}" for c in columns)
    return f"""
        WITH q AS MATERIALIZED (
            SELECT websearch_to_tsquery('{CONFIG}', t) AS tq FROM unnest(%s::text[]) AS t
        ), total AS MATERIALIZED (
            SELECT n::float8 AS n, greatest(coalesce((total_len::numeric / nullif(n, 0))::float8, 0), 1e-9) AS avgdl
            FROM {STATS_TABLE} WHERE tbl = '{table}'
        ), s AS MATERIALIZED (
            SELECT q.tq, greatest(ln((total.n - d.df + 0.5) / (d.df + 0.5)), {IDF_MIN}) AS idf
            FROM q CROSS JOIN total
            CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM {table} x WHERE x.fts @@ q.tq) d
            WHERE numnode(q.tq) > 0
        ), m AS MATERIALIZED (
            SELECT {selected}, {alias}.fts,
                   {K1} * ({1.0 - B} + {B} * {alias}.fts_len / (SELECT avgdl FROM total)) AS k,
                   (SELECT coalesce(sum(s.idf), 0) FROM s WHERE {alias}.fts @@ s.tq) * {K1 + 1.0} AS ceiling
            FROM {table} {alias}
            WHERE {alias}.fts @@ websearch_to_tsquery('{CONFIG}', %s){where}
        ), lim AS MATERIALIZED (
            SELECT %s::bigint AS n
        ), top AS MATERIALIZED (
            SELECT {_score("m")} AS score FROM m ORDER BY m.ceiling DESC, m.id LIMIT (SELECT n FROM lim)
        ), bar AS MATERIALIZED (
            SELECT CASE WHEN count(*) >= (SELECT n FROM lim) THEN min(score) ELSE '-infinity'::float8 END AS v
            FROM top
        )
        SELECT {", ".join(f"m.{c}" for c in columns)}, {_score("m")} AS score
        FROM m WHERE m.ceiling >= (SELECT v FROM bar) ORDER BY score DESC, m.id LIMIT (SELECT n FROM lim)"""
