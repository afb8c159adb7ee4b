"""PostgreSQL's keyword leg at 10k and 100k rows: the server's time and the client's CPU per query, before and after.

    python -m bench.pg_keyword [--database-url URL] [--sizes 10000,100000] [--prompts 300] [--limit 38]

Without --database-url it starts a throwaway cluster (scripts/pg-cluster.sh) and stops it at the end. One fresh
database, migrated to main's schema; memory_noderow is filled by INSERT ... SELECT (no embedding: the keyword leg
reads none) with the inline texts of the labelled stores (every runnable store but docs, whose pages are files of
installed packages), copied with distinct ids up to each size and analysed. The queries are `fts_query` of the
whisper dev prompts of batches 1-17 (every k-th, to `--prompts`), each run as the keyword leg runs it: every token
(AND) and any token (OR), `limit` rows.

Three SQL statements per query, in turn, in the same run:
- before: session 26's ranking (pg_bm25.ranked_sql as merged in b379e0a, kept below as BEFORE_SQL): count(*) and
  avg(fts_len) over the whole table, df per token through the GIN index, ts_rank_cd per token on every match;
- after: memory.backends.pg_bm25.ranked_sql as it is now;
- floor: the plain GIN match with the LIMIT and no ranking (what no ranking can go below).
For each: the server's execution time (EXPLAIN (ANALYZE, TIMING OFF), planning apart), p50 / p95; the client's CPU
per query (process time around execute + fetch); the server process's CPU per query (its /proc utime + stime over
the whole pass, divided by the queries). "before" and "after" must return the same rows with the same scores (the
bench counts the queries where they differ). Then, at the largest size, what the stats triggers cost a write
(`--writes`: single-row INSERT, UPDATE of the content, DELETE, each its own transaction, triggers on and off).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CLUSTER = REPO / "scripts" / "pg-cluster.sh"
DB_NAME = "bench_pg_keyword"
FRESH = 18  # held-out batch (bench/whisper_gate_fit.py FRESH_BATCHES): never used here

# Session 26's statement (b379e0a), the reference "before": the totals scan every row of the table per query.
BEFORE_SQL = """
        WITH q AS MATERIALIZED (
            SELECT websearch_to_tsquery('{config}', t) AS tq FROM unnest(%s::text[]) AS t
        ), total AS MATERIALIZED (
            SELECT count(*)::float8 AS n, greatest(coalesce(avg(fts_len), 0)::float8, 1e-9) AS avgdl FROM {table}
        ), s AS MATERIALIZED (
            SELECT q.tq, greatest(ln((total.n - d.df + 0.5) / (d.df + 0.5)), {idf_min}) AS idf
            FROM q CROSS JOIN total
            CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM {table} x WHERE x.fts @@ q.tq) d
            WHERE numnode(q.tq) > 0
        ), m AS MATERIALIZED (
            SELECT n.id, n.fts,
                   {k1} * ({one_b} + {b} * n.fts_len / (SELECT avgdl FROM total)) AS k
            FROM {table} n
            WHERE n.fts @@ websearch_to_tsquery('{config}', %s)
        )
        SELECT m.id,
               (SELECT coalesce(sum(s.idf * t.f * {k1_1} / (t.f + m.k)), 0) FROM s CROSS JOIN LATERAL
                (SELECT round({scale} * ts_rank_cd({weights}, m.fts, s.tq, 0)) AS f) t) AS score
        FROM m ORDER BY score DESC, m.id LIMIT %s"""


def _before_sql() -> str:
    from memory.backends import pg_bm25

    return BEFORE_SQL.format(config=pg_bm25.CONFIG, table="memory_noderow", idf_min=pg_bm25.IDF_MIN, k1=pg_bm25.K1,
                             one_b=1.0 - pg_bm25.B, b=pg_bm25.B, k1_1=pg_bm25.K1 + 1.0, scale=pg_bm25.SCALE,
                             weights=pg_bm25.RANK_WEIGHTS)


def _floor_sql() -> str:
    from memory.backends import pg_bm25

    return f"SELECT n.id FROM memory_noderow n WHERE n.fts @@ websearch_to_tsquery('{pg_bm25.CONFIG}', %s) LIMIT %s"


# --- The cluster and the database --------------------------------------------------------------------------------


def _cluster_start() -> str:
    out = subprocess.run(["bash", str(CLUSTER)], check=True, capture_output=True, text=True).stdout
    return out.strip().splitlines()[-1]


def _cluster_stop(url: str) -> None:
    folder = url.split("host=", 1)[1].split("&", 1)[0]
    subprocess.run(["bash", str(CLUSTER), "stop", folder], check=False)


def _setup(url: str, home: str) -> None:
    os.environ["ORMAH_HOME"] = home
    os.environ["ORMAH_DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    os.environ.setdefault("ORMAH_LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


# --- The rows and the queries ------------------------------------------------------------------------------------


def store_texts() -> list[tuple[str, str, str]]:
    """(title, content, tags_text) of every memory whose text a runnable store holds inline (docs's are files)."""
    from bench.datasets.loader import STORES, raw_store

    out = []
    for name in STORES:
        for m in raw_store(name)["memories"]:
            if "content" in m:
                out.append((m.get("title") or "", m["content"], " ".join(m.get("tags", ()))))
    return out


def prompt_queries(count: int) -> list:
    """`fts_query` of every k-th whisper dev prompt of batches 1-17 (about `count`), those with a token."""
    from bench.datasets.loader import load_whisper
    from memory.search.fts import fts_query

    prompts = [p for p in load_whisper().prompts_in("dev") if p.get("batch", 1) < FRESH]
    step = max(1, len(prompts) // max(1, count))
    queries = [fts_query(p["prompt"]) for p in prompts[::step]]
    return [q for q in queries if q.tokens][:count]


_INSERT = """
    INSERT INTO memory_noderow (uid, short_id, type, tier, space, space_locked, title, content, tags_text, source,
        connections_json, confidence, importance, access_count, stability, created, updated, last_accessed, is_self,
        file_path, file_hash, file_mtime_ns, file_size, embed_hash, indexed_seq, pinned, authority, read_only,
        trust_json)
    SELECT 'bench-' || c || '-' || t.i, substr(md5(c || '-' || t.i), 1, 8), 'fact', 'working', NULL, false,
           t.title, t.content, t.tags, 'bench', '[]', 1.0, 0.5, 0, 1.0, now(), now(), now(), false,
           'bench/' || c || '-' || t.i || '.md', md5(c || '-' || t.i), 0, 0, '', 0, false, 0, false, '{}'
    FROM unnest(%s::text[], %s::text[], %s::text[]) WITH ORDINALITY AS t(title, content, tags, i)
    CROSS JOIN generate_series(%s, %s) AS c
    WHERE (c - 1) * %s + t.i <= %s"""


def fill(cur, texts: list[tuple[str, str, str]], have: int, size: int) -> None:
    """Add copies of `texts` (distinct uids and paths) until memory_noderow holds `size` rows; then ANALYZE."""
    per = len(texts)
    first, last = have // per + 1, (size + per - 1) // per
    titles, contents, tags = (list(col) for col in zip(*texts))
    if have % per:
        raise ValueError("the table must hold whole copies")
    cur.execute(_INSERT, [titles, contents, tags, first, last, per, size])
    cur.execute("VACUUM ANALYZE memory_noderow")


# --- Measuring ---------------------------------------------------------------------------------------------------


def _args(variant: str, query, match_all: bool, limit: int) -> list:
    from memory.backends import postgres

    match = postgres._websearch(query.tokens, match_all)
    if variant == "floor":
        return [match, limit]
    return [[postgres._PUNCTUATION.sub(" ", t) for t in query.tokens], match, limit]


def _sql(variant: str) -> str:
    from memory.backends import pg_bm25

    if variant == "before":
        return _before_sql()
    if variant == "floor":
        return _floor_sql()
    return pg_bm25.ranked_sql("memory_noderow", "n", ["id"], "")


VARIANTS = ("before", "after", "floor")


def measure(cur, clock, queries: list, limit: int) -> dict:
    """Per variant and mode (AND / OR): server execution ms (EXPLAIN ANALYZE), client CPU ms, server CPU ms per query;
    and the queries whose rows or scores differ between before and after."""
    sqls = {v: _sql(v) for v in VARIANTS}
    out = {(v, mode): {"exec": [], "plan": [], "client": [], "server": 0.0}
           for v in VARIANTS for mode in ("and", "or")}
    differ = {"and": 0, "or": 0}
    for mode in ("and", "or"):
        match_all = mode == "and"
        runs = [(q, match_all) for q in queries if match_all or len(q.tokens) > 1]
        for variant in VARIANTS:  # EXPLAIN ANALYZE pass (also warms the caches)
            for q, m in runs:
                cur.execute("EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) " + sqls[variant],
                            _args(variant, q, m, limit))
                plan = cur.fetchone()[0]
                plan = plan[0] if isinstance(plan, list) else json.loads(plan)[0]
                out[(variant, mode)]["exec"].append(plan["Execution Time"])
                out[(variant, mode)]["plan"].append(plan["Planning Time"])
        results = {}
        for variant in VARIANTS:  # executed pass: client CPU per query, server CPU over the pass
            rows_of = []
            server0 = clock()
            for q, m in runs:
                args = _args(variant, q, m, limit)
                t0 = time.process_time()
                cur.execute(sqls[variant], args)
                rows = cur.fetchall()
                out[(variant, mode)]["client"].append((time.process_time() - t0) * 1000)
                rows_of.append([tuple(r) for r in rows])
            out[(variant, mode)]["server"] = (clock() - server0) * 1000 / max(1, len(runs))
            results[variant] = rows_of
        differ[mode] = sum(a != b for a, b in zip(results["before"], results["after"]))
        out[("n", mode)] = len(runs)
    out["differ"] = differ
    return out


def _pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p * (len(ordered) - 1))))]


def report(size: int, stats: dict, load: tuple[float, float], cpu: float) -> list[str]:
    lines = [f"{size:,} rows: {stats[('n', 'and')]} AND queries, {stats[('n', 'or')]} OR queries; load "
             f"{load[0]:.2f} -> {load[1]:.2f}; bench process {cpu:.1f} s CPU; before/after differ on "
             f"{stats['differ']['and']} AND, {stats['differ']['or']} OR queries",
             "| variant | mode | server exec ms p50 / p95 / mean | planning ms p50 | server CPU ms/query | "
             "client CPU ms p50 / p95 |", "|---|---|---|---|---|---|"]
    for mode in ("and", "or"):
        for variant in VARIANTS:
            s = stats[(variant, mode)]
            lines.append(f"| {variant} | {mode.upper()} | {_pct(s['exec'], 0.5):.2f} / {_pct(s['exec'], 0.95):.2f} / "
                         f"{statistics.fmean(s['exec']):.2f} | {_pct(s['plan'], 0.5):.2f} | {s['server']:.2f} | "
                         f"{_pct(s['client'], 0.5):.3f} / {_pct(s['client'], 0.95):.3f} |")
    return lines


_INSERT_ONE = """
    INSERT INTO memory_noderow (uid, short_id, type, tier, space, space_locked, title, content, tags_text, source,
        connections_json, confidence, importance, access_count, stability, created, updated, last_accessed, is_self,
        file_path, file_hash, file_mtime_ns, file_size, embed_hash, indexed_seq, pinned, authority, read_only,
        trust_json)
    VALUES (%s, 'w', 'fact', 'working', NULL, false, 'Write cost', %s, '', 'bench', '[]', 1.0, 0.5, 0, 1.0, now(),
            now(), now(), false, %s, '', 0, 0, '', 0, false, 0, false, '{}')"""
STATS_TRIGGERS = ("memory_noderow_stats_ai", "memory_noderow_stats_ad", "memory_noderow_stats_au")


def write_cost(cur, clock, rounds: int) -> dict[str, dict[str, float]]:
    """The stats triggers' cost on writes (migration 0013): `rounds` single-row INSERTs, content UPDATEs (the length
    changes) and DELETEs, each its own transaction as a remember's is, with the triggers enabled and disabled in
    turn; the server's CPU ms per statement. The rows are the bench's own and are gone afterwards."""
    out: dict[str, dict[str, float]] = {}
    for state in ("enabled", "disabled", "enabled again"):
        verb = "DISABLE" if state == "disabled" else "ENABLE"
        for name in STATS_TRIGGERS:
            cur.execute(f"ALTER TABLE memory_noderow {verb} TRIGGER {name}")
        row: dict[str, float] = {}
        for step in ("insert", "update", "delete"):
            start = clock()
            for i in range(rounds):
                uid = f"write-{i}"
                if step == "insert":
                    cur.execute(_INSERT_ONE, [uid, f"A note about the write cost, number {i}.", f"write/{i}.md"])
                elif step == "update":
                    cur.execute("UPDATE memory_noderow SET content = content || ' One more sentence.' WHERE uid = %s",
                                [uid])
                else:
                    cur.execute("DELETE FROM memory_noderow WHERE uid = %s", [uid])
            row[step] = (clock() - start) * 1000 / rounds
        out[state] = row
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", help="a PostgreSQL server with pgvector (default: a throwaway cluster)")
    parser.add_argument("--sizes", default="10000,100000", help="row counts, ascending (default 10000,100000)")
    parser.add_argument("--prompts", type=int, default=300, help="whisper dev prompts to query (default 300)")
    parser.add_argument("--limit", type=int, default=38, help="rows per query (default 38: recall's 30 plus margin)")
    parser.add_argument("--writes", type=int, default=500,
                        help="single-row writes per step for the triggers' cost at the largest size (0: none)")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    server = args.database_url or _cluster_start()
    from bench import pg

    try:
        with pg.scratch(server, DB_NAME) as url, tempfile.TemporaryDirectory() as home:
            _setup(url, home)
            from django.db import connection

            texts = store_texts()
            queries = prompt_queries(args.prompts)
            clock = pg.server_cpu(connection)
            print(f"{pg.server_version(server)}; {len(texts)} inline memories; {len(queries)} queries; "
                  f"limit {args.limit}", flush=True)
            have = 0
            with connection.cursor() as cur:
                for size in sizes:
                    size = (size + len(texts) - 1) // len(texts) * len(texts)  # whole copies
                    fill(cur, texts, have, size)
                    have = size
                    load0, cpu0 = os.getloadavg()[0], time.process_time()
                    stats = measure(cur, clock, queries, args.limit)
                    print("\n".join(report(size, stats, (load0, os.getloadavg()[0]),
                                           time.process_time() - cpu0)), flush=True)
                if args.writes:
                    load0 = os.getloadavg()[0]
                    costs = write_cost(cur, clock, args.writes)
                    print(f"Writes at {have:,} rows, {args.writes} single-row statements a step, server CPU ms per "
                          f"statement, load {load0:.2f} -> {os.getloadavg()[0]:.2f}:", flush=True)
                    for state, row in costs.items():
                        print(f"  stats triggers {state}: " + ", ".join(f"{k} {v:.3f}" for k, v in row.items()))
    finally:
        if not args.database_url:
            _cluster_stop(server)
    return 0


if __name__ == "__main__":
    sys.exit(main())
