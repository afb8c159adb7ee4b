"""When the FTS leg fails, the WARNING keeps the error and a count of terms; the expression, which holds the
user's words, is logged only at DEBUG (docs/security.md: content only at DEBUG)."""

from __future__ import annotations

import logging

import pytest

from memory.search import fts_query
from memory.search import evidence
from memory.search.fts import _run

pytestmark = pytest.mark.django_db


def assert_logged_only_at_debug(caplog, warning: str) -> None:
    """One WARNING starting with `warning`, with the error and the count of terms but none of the words, which
    only DEBUG holds."""
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert len(warnings) == 1 and warnings[0].startswith(warning), warnings
    assert "3 terms" in warnings[0] and "no_such_column_fix4" in warnings[0], warnings
    assert not any(word in warnings[0] for word in ("secret", "pancake", "recipe")), warnings
    assert any("pancake" in m for m in debug), debug


def test_failed_fts_query_logs_its_words_only_at_debug(caplog):
    query = fts_query("secret pancake recipe")
    with caplog.at_level(logging.DEBUG, logger="memory.search.fts"):
        # a filter naming a column that does not exist: the engine raises, on SQLite and PostgreSQL alike
        assert _run(query, True, 5, where="no_such_column_fix4 = 1") is None
    assert_logged_only_at_debug(caplog, "FTS query failed")


def test_failed_evidence_query_logs_its_words_only_at_debug(caplog):
    query = fts_query("secret pancake recipe")
    with caplog.at_level(logging.DEBUG, logger="memory.search.evidence"):
        assert evidence._run(query, True, 5, "no_such_column_fix4 = 1", []) == []
    assert_logged_only_at_debug(caplog, "Evidence FTS query failed")
