"""Ledger rows written without the ORM's per-object work: one prepared INSERT run for every row (executemany).

A whisper call writes a decision's candidate rows and a session-buffer row on every call; Django's bulk_create
builds a model object per row and prepares each of its fields through the field classes (most of a whisper
call's bookkeeping CPU, docs/benchmarks.md "CPU per call (session 14)"). Here the values are converted the way
those fields convert them (`_float`, `_int`: FloatField and IntegerField call float() and int(), so a numpy
scalar is stored as the same number) and bound as they are, on SQLite and on PostgreSQL alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.db import connection

from whisper.models import WhisperCandidateRow

CANDIDATE_COLUMNS = ("decision_id", "node_uid", "short_id", "title", "source", "retrieval_rank", "retrieval_score",
                     "raw_cosine", "ce_raw", "ce_abs", "affinity", "gate_score", "gate_threshold", "stage",
                     "final_rank", "injected", "use_confirmed")
MAX_TITLE = 300


def _float(value) -> float | None:
    return None if value is None else float(value)


def _int(value) -> int | None:
    return None if value is None else int(value)


def insert_sql(table: str, columns: Sequence[str]) -> str:
    """`INSERT INTO table (columns) VALUES (%s, ...)`, names quoted for the connection's database."""
    quote = connection.ops.quote_name
    return (f"INSERT INTO {quote(table)} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})")


def candidate_rows_insert(*, decision_id: int, candidates: Iterable, injected: bool) -> None:
    """One row per candidate of a decision (whisper.state.Candidate), as WhisperCandidateRow holds it."""
    rows = [(decision_id, c.node_id, c.short_id, c.display_title[:MAX_TITLE], c.source, _int(c.retrieval_rank),
             float(c.retrieval_score), _float(c.raw_cosine), _float(c.ce_raw), _float(c.ce_abs), float(c.affinity),
             _float(c.gate_score), _float(c.gate_threshold), c.stage, _int(c.final_rank),
             injected and c.final_rank is not None, False) for c in candidates]
    if rows:
        with connection.cursor() as cur:
            cur.executemany(insert_sql(WhisperCandidateRow._meta.db_table, CANDIDATE_COLUMNS), rows)
