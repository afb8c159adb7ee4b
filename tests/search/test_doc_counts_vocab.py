"""Document counts read from the FTS5 vocabulary table equal the per-term MATCH counts (issue 13, session 18)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory.backends import sqlite, sqlite_fulltext
from memory.domain.text import words

TEXTS = [
    ("Running the nightly backups with restic; the runner runs at 02:30", "Backups", ["ops", "backup"]),
    ("Café crème at the Zürich office — naïve résumé of the déjà vu meeting", "Café", ["travel"]),
    ('She said "ship it" about v2.1.3 and the 3.4GHz CPUs; IPv6 rollout in 2026', "Ship it", ["release"]),
    ("The gardens' sensors report every fifteen minutes; a garden sensor reported 17 faults", "Sensors", ["garden"]),
    ("tests/billing/test_invoices.py fails on snake_case_names and camelCaseNames; e-mail re-run", "", []),
    ("Don't use the user's quotes: it's 'single' and \"double\" quoted — ﬁle ligature, ß, İstanbul", "Quotes", []),
    ("日本語 text and emoji 🚀 rocket launches; Ελληνικά words; numbers 42 and 0042 and 4.2", "Unicode", ["i18n"]),
    ("Connection connected connecting connections; generalization generalize general", "Stems", ["stem"]),
]

ABSENT = ["zeppelin", "quux", "xylophones", "9999", "naïveté", "Zürichs", "日本", "rockets🚀"]
pytestmark = pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite backend's vocabulary table")

ODD = ['"', '""', "***", "-", "e-mail", "v2.1.3", "snake_case_names", "it's", "3.4GHz", "a b", " ", "Ünïcödé",
       "RUNNING", "Run", "runs", "résumé", "resume", "deja", "ﬁle", "file", "SS", "ß", "istanbul", "0042", "42"]


@pytest.fixture
def store(mem):
    for content, title, tags in TEXTS:
        mem(content, title=title or None, tags=tags, auto_link=False)


def _terms() -> list[str]:
    found = [w for content, title, _ in TEXTS for w in words(f"{title} {content}")]
    raw = [w for content, _, _ in TEXTS for w in content.split()]
    return list(dict.fromkeys(found + raw + ABSENT + ODD))


@pytest.mark.parametrize("cap", [1, 2, 3, 5000])
def test_vocabulary_counts_equal_the_match_counts(store, cap):
    terms = _terms()
    assert len(terms) > 150
    with connection.cursor() as cur:
        expected = {t: sqlite_fulltext._match_count(cur, t, cap) for t in terms}
    assert sqlite.doc_counts(terms, cap) == expected
    assert max(expected.values()) == min(cap, 5) and any(n == 0 for n in expected.values())


def test_counts_follow_writes_and_deletes(store, mem):
    node = mem("Zeppelin zeppelins over the garden", auto_link=False)
    with connection.cursor() as cur:
        assert sqlite.doc_counts(["zeppelin", "garden"], 5000) == {
            t: sqlite_fulltext._match_count(cur, t, 5000) for t in ("zeppelin", "garden")}
    assert sqlite.doc_counts(["zeppelin"], 5000) == {"zeppelin": 1}
    from memory.models import NodeRow
    NodeRow.objects.filter(uid=node.id).delete()
    assert sqlite.doc_counts(["zeppelin", "garden"], 5000)["zeppelin"] == 0


def test_single_token_terms_take_one_read_not_a_match_each(store):
    terms = ["backup", "garden", "sensors", "zeppelin", "café", "running", "42"]
    sqlite.doc_counts(terms, 5000)  # the terms' tokens are now known to this process
    with CaptureQueriesContext(connection) as queries:
        counts = sqlite.doc_counts(terms, 5000)
    assert counts["running"] == 2 and counts["zeppelin"] == 0
    assert not [q for q in queries.captured_queries if "MATCH" in q["sql"]]
    # node_fts's tokenize= declaration (the token cache's key), then one vocabulary read
    tables = [q["sql"].split(" FROM ")[1].split()[0] for q in queries.captured_queries]
    assert tables == ["sqlite_master", "node_fts_vocab"]


def _redeclare_node_fts(tokenize: str | None) -> None:
    """node_fts (and its vocabulary) made again with another tokenize= (None: left out), indexed from the rows: the
    index of another store whose full-text table was declared otherwise (the test's transaction undoes it)."""
    options = f", tokenize='{tokenize}'" if tokenize is not None else ""
    with connection.cursor() as cur:
        cur.execute("DROP TABLE node_fts_vocab")
        cur.execute("DROP TABLE node_fts")
        cur.execute("CREATE VIRTUAL TABLE node_fts USING fts5(title, content, tags_text, content='memory_noderow', "
                    f"content_rowid='id'{options})")
        cur.execute("INSERT INTO node_fts(node_fts) VALUES ('rebuild')")
        cur.execute("CREATE VIRTUAL TABLE node_fts_vocab USING fts5vocab(node_fts, row)")


@pytest.mark.parametrize("tokenize", ["unicode61", None])
def test_a_store_with_another_tokenizer_reads_no_other_stores_tokens(store, tokenize):
    terms = _terms()
    porter = sqlite.doc_counts(terms, 5000)  # this process now knows the terms' porter tokens ("runs" -> "run")
    _redeclare_node_fts(tokenize)  # no porter stems: "runs" is its own token
    with connection.cursor() as cur:
        expected = {t: sqlite_fulltext._match_count(cur, t, 5000) for t in terms}
    assert (porter["runs"], expected["runs"]) == (2, 1)
    assert sum(porter[t] != expected[t] for t in terms) >= 5
    assert sqlite.doc_counts(terms, 5000) == expected


def test_a_missing_vocabulary_table_falls_back_to_the_match_counts(store):
    terms = _terms()
    with connection.cursor() as cur:
        expected = {t: sqlite_fulltext._match_count(cur, t, 3) for t in terms}
        cur.execute("DROP TABLE node_fts_vocab")
    assert sqlite.doc_counts(terms, 3) == expected


def test_a_missing_fulltext_table_is_a_clear_error(store):
    from memory.errors import IndexUnavailable, OrmahError

    with connection.cursor() as cur:
        cur.execute("DROP TABLE node_fts_vocab")
        cur.execute("DROP TABLE node_fts")
    with pytest.raises(IndexUnavailable, match="node_fts is missing") as raised:
        sqlite.doc_counts(["garden", "e-mail"], 5000)
    assert isinstance(raised.value, OrmahError) and raised.value.details == {"table": "node_fts"}
    assert sqlite.doc_counts([], 5000) == {}
