"""CPU a call of the small parts every served request runs, timed in a loop (no sampling), on a copy of a home.

    python -m bench.request_parts --home DIR [--calls 3000]

`--home` is a folder `bench.serve_cpu --keep` printed (or `bench.soak --home-cache`'s home-* folder): its `home`
is copied and this process sets Django up on the copy. Each part is called `--calls` times after one call, and the
process CPU (time.process_time) a call is printed, in microseconds:
  memory get_conf, whisper get_conf, token_current   the configuration and the API token, asked at each request;
  _declared_tokenize                                 node_fts's tokenize= read from sqlite_master (Django's cursor),
                                                     and the same statement on the raw connection, PRAGMA
                                                     schema_version (raw), SELECT 1 (Django's cursor);
  MATCH and / or / or counted, vocabulary IN         a soak prompt's full-text statements on the raw connection.
Run it in the checkout to measure (`cd OLD && python -m bench.request_parts ...` measures OLD's code).
A benchmark, not a test: nothing asserts.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

MATCH = ("SELECT rowid, -bm25(node_fts, 10.0, 1.0, 3.0) AS score FROM node_fts WHERE node_fts MATCH ? "
         "ORDER BY score DESC, rowid LIMIT 50")
AND_QUERY = '"know" AND "load" AND "team" AND "uses" AND "already"'
OR_QUERY = '"know" OR "load" OR "team" OR "uses" OR "already"'
VOCAB_TERMS = ("control", "endpoint", "marco", "ripgrep", "sop", "syncth", "tmux", "upload", "valv")


def per_call(fn, calls: int) -> float:
    """Microseconds of process CPU a call of `fn`, after one call."""
    fn()
    started = time.process_time()
    for _ in range(calls):
        fn()
    return (time.process_time() - started) / calls * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", required=True, help="a folder holding `home` (bench.serve_cpu --keep)")
    parser.add_argument("--calls", type=int, default=3000)
    args = parser.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="ormah-request-parts-"))
    try:
        shutil.copytree(Path(args.home) / "home", root / "home", symlinks=True)
        for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_API_TOKEN"):
            os.environ.pop(key, None)
        os.environ.update({"ORMAH_HOME": str(root / "home"), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
                           "ORMAH_LOG_LEVEL": "WARNING"})
        time.sleep(2.5)  # the copied token file is a few ms old: let it settle, as a served home's is
        return run(args.calls)
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run(calls: int) -> int:
    import django

    django.setup()
    from django.db import connection

    from memory.backends import sqlite_fulltext
    from memory.conf import get_conf as memory_conf
    from ormah_site.tokens import token_current
    from whisper.conf import get_conf as whisper_conf

    load = os.getloadavg()[0]
    rows = [("memory get_conf", memory_conf), ("whisper get_conf", whisper_conf), ("token_current", token_current)]
    with connection.cursor() as cur:
        raw = connection.connection
        vocab = f"SELECT term, doc FROM node_fts_vocab WHERE term IN ({', '.join('?' * len(VOCAB_TERMS))})"
        rows += [
            ("_declared_tokenize", lambda: sqlite_fulltext._declared_tokenize(cur)),
            ("its statement, raw connection", lambda: raw.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'node_fts'").fetchone()),
            ("PRAGMA schema_version, raw", lambda: raw.execute("PRAGMA schema_version").fetchone()),
            ("SELECT 1, Django's cursor", lambda: (cur.execute("SELECT 1"), cur.fetchone())),
            ("MATCH, AND query", lambda: raw.execute(MATCH, [AND_QUERY]).fetchall()),
            ("MATCH, OR query", lambda: raw.execute(MATCH, [OR_QUERY]).fetchall()),
            ("OR query counted", lambda: raw.execute(
                "SELECT count(*) FROM node_fts WHERE node_fts MATCH ?", [OR_QUERY]).fetchone()),
            (f"vocabulary, {len(VOCAB_TERMS)} terms IN", lambda: raw.execute(vocab, VOCAB_TERMS).fetchall()),
        ]
        print(f"load average {load:.2f}; {calls} calls each; us of process CPU a call")
        print("| part | us a call |\n|---|---:|")
        for name, fn in rows:
            n = calls if "MATCH" not in name and "query" not in name else max(calls // 10, 1)
            print(f"| {name} | {per_call(fn, n):.1f} |")
    print(f"load average after {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
