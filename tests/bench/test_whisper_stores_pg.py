"""bench.whisper_stores and bench.stores_recall on PostgreSQL (`--database-url`, default ORMAH_DATABASE_URL): a
fresh database of the run's own on that server, dropped after it; a server that cannot be reached is a clear error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest
from django.db import connection

from tests.postgres import postgres_only

REPO = Path(__file__).resolve().parents[2]
NOWHERE = "postgres://postgres@/ormah?host=/nonexistent-ormah-socket-dir&port=5999"


def bench(module: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    child = {k: v for k, v in os.environ.items() if not k.startswith(("ORMAH_", "DJANGO_"))}
    if os.environ.get("ORMAH_MODEL_CACHE_DIR"):  # the test run's model folder, else the bench's default
        child["ORMAH_MODEL_CACHE_DIR"] = os.environ["ORMAH_MODEL_CACHE_DIR"]
    child |= {"PYTHONPATH": str(REPO)} | (env or {})
    return subprocess.run([sys.executable, "-m", module, *args], cwd=REPO, env=child, capture_output=True, text=True,
                          timeout=600, check=False)


@pytest.mark.parametrize("module", ["bench.whisper_stores", "bench.stores_recall"])
@pytest.mark.parametrize("how", ["flag", "environment"])
def test_an_unreachable_server_is_a_clear_error(module, how):
    done = bench(module, "--split", "dev", *(["--database-url", NOWHERE] if how == "flag" else []),
                 env={"ORMAH_DATABASE_URL": NOWHERE} if how == "environment" else None)

    assert done.returncode == 1
    assert f"cannot reach the PostgreSQL server of {NOWHERE}" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_missing_driver_is_a_clear_error(tmp_path):
    # `make test`'s SQLite stage installs Ormah without its postgres extra: the final CI of session 25 met a
    # ModuleNotFoundError traceback here. A psycopg that cannot be imported stands in for the missing package.
    (tmp_path / "psycopg").mkdir()
    (tmp_path / "psycopg" / "__init__.py").write_text("raise ImportError('No module named psycopg')\n")
    done = bench("bench.whisper_stores", "--split", "dev", "--database-url", NOWHERE,
                 env={"PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)])})

    assert done.returncode == 1
    assert f"cannot reach the PostgreSQL server of {NOWHERE}: its driver is not installed" in done.stderr
    assert "postgres extra" in done.stderr and "Traceback" not in done.stderr


def server_url() -> str:
    """The test server's URL (its `postgres` database), as scripts/pg-cluster.sh prints one."""
    d = connection.settings_dict
    host, port = d["HOST"] or "localhost", d["PORT"] or 5432
    if host.startswith("/"):
        return f"postgres://{quote(d['USER'] or 'postgres')}@/postgres?host={quote(host)}&port={port}"
    auth = quote(d["USER"] or "postgres") + (":" + quote(d["PASSWORD"]) if d["PASSWORD"] else "")
    return f"postgres://{auth}@{host}:{port}/postgres"


def bench_databases() -> set[str]:
    with connection.cursor() as cur:
        cur.execute("SELECT datname FROM pg_database WHERE datname LIKE 'ormah_whisper_stores_%%'")
        return {r[0] for r in cur.fetchall()}


@postgres_only
@pytest.mark.django_db
def test_whisper_stores_runs_a_batch_in_a_fresh_database_of_its_own_and_drops_it():
    from bench.datasets.loader import load_whisper, merged_memories

    done = bench("bench.whisper_stores", "--split", "dev", "--batch", "2", "--show", "--database-url", server_url())

    assert done.returncode == 0, done.stderr[-3000:]
    assert "index: postgresql" in done.stderr
    # every memory of the open stores (262 over five, 307 since course opened in session 26: the count was pinned)
    assert f"seeded {len(merged_memories(load_whisper().stores)[0])} memories" in done.stderr
    shown = [ln for ln in done.stdout.splitlines() if ln.startswith("dev ")]
    assert len(shown) == 57 and any(" injected " in ln for ln in shown)  # batch 2's dev half, and it whispers
    assert not bench_databases()  # the run's database is gone
