"""The search backend: everything whose SQL differs between SQLite and PostgreSQL, behind one small interface.

Two implementations, chosen by the connection's vendor (ORMAH_DATABASE_URL unset: SQLite):
- `memory.backends.sqlite`: FTS5 (bm25) + sqlite-vec's vec0 table + SQLite's online backup (today's code);
- `memory.backends.postgres`: a weighted tsvector ranked by FTS5's BM25 + pgvector (HNSW, cosine, exact
  re-scoring) + no index file in backups (the index is derived; a restore rebuilds it).

Both expose the same functions (the `SearchBackend` protocol); memory.search.fts, .vectors, .evidence and
memory.services.backup call them, so the recall pipeline above is one and the same on both engines.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Protocol

import numpy as np
from django.db import connection

from memory.backends import postgres, sqlite


class SearchBackend(Protocol):
    """What an engine must answer (module-level functions of memory.backends.sqlite / .postgres)."""

    # full-text leg: (row_id, score) best first, score higher is better; None when the engine refused the query
    def node_fulltext(self, tokens: Sequence[str], *, match_all: bool, limit: int,
                      where: str | None = None, params: Sequence = ()) -> list[tuple[int, float]] | None: ...
    def doc_counts(self, terms: Sequence[str], cap: int) -> dict[str, int]: ...
    # document counts carried across writes (memory/search/candidates.py): an SQL expression whose value changes with
    # every write to the full-text index (None: the engine has none, nothing is carried), the counts with the terms
    # read at one mark (term -> token) and that mark, and how many of some new rows hold each token
    FULLTEXT_MARK_SQL: str | None
    def doc_counts_marked(self, terms: Sequence[str], cap: int) -> tuple[dict[str, int], dict[str, str],
                                                                         str | None]: ...
    def row_tokens(self, rows: Sequence[Sequence[str]]) -> dict[str, int]: ...
    def evidence_fulltext(self, tokens: Sequence[str], *, match_all: bool, limit: int,
                          where: str, params: Sequence) -> list[tuple[int, str, float]]: ...
    # vector leg
    def table_dim(self) -> int | None: ...
    def create_table(self, dim: int) -> None: ...
    def upsert(self, rows: list[tuple[int, np.ndarray, str, str, str]]) -> None: ...
    def update_metadata(self, row_id: int, type: str, tier: str, space: str) -> None: ...  # noqa: A002
    def metadata(self, row_id: int) -> tuple[str, str, str] | None: ...  # (type, tier, space) of a row's vector
    def vector_bytes(self, row_ids: Sequence[int] | None) -> dict[int, bytes]: ...
    def knn(self, vector: np.ndarray, k: int, where: list[tuple[str, list]], row_ids: Sequence[int] | None,
            exclude_row_ids: Sequence[int] | None) -> list[tuple[int, float]]: ...
    # health
    def engine_info(self) -> dict: ...
    def engine_line(self) -> str: ...
    def fulltext_count(self) -> int: ...
    def fulltext_rows(self) -> list[tuple]: ...
    # SQL fragments the shared modules need
    def timestamp_text(self, column: str) -> str: ...
    def timestamp_column(self, column: str) -> str: ...
    def hash_concat(self, column: str) -> str: ...
    # backup
    def index_copy(self, dest: Path) -> bool: ...
    def index_restore(self, snapshot: Path) -> bool: ...


def backend() -> ModuleType:
    """The implementation for the default connection's engine."""
    return postgres if connection.vendor == "postgresql" else sqlite
