"""The SQLite backend's full text: FTS5 ranked by bm25 over node_fts and evidence_fts, and the document counts
memory/search/candidates.py reads from node_fts's vocabulary table and a private tokenizer.

Part of the SQLite search backend (memory/backends/sqlite.py re-exports it; memory/backends/__init__.py describes
the interface), split out of it unchanged.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from django.db import DatabaseError, connection

from memory.errors import IndexUnavailable

if TYPE_CHECKING:
    from memory.search.fts import FtsQuery

NODE_TABLE = "memory_noderow"
FTS_TABLE = "node_fts"
BM25_WEIGHTS = (10.0, 1.0, 3.0)  # title, content, tags_text
EVIDENCE_FTS = "evidence_fts"
EVIDENCE_TABLE = "memory_evidencerow"


def node_fulltext(query: FtsQuery, *, match_all: bool, limit: int, where: str | None = None,
                  params: Sequence = (), within: str | None = None) -> list[tuple[int, float]]:
    """(row_id, -bm25) of the best `limit` rows matching every token (any token when not `match_all`); with
    `where`, only rows `n` of memory_noderow passing it (a joined query); with `within` (SQLite only, no `where`),
    only rows also matching that MATCH expression, scored as by the query alone (memory/search/fts.py)."""
    expression = query.all_of if match_all else query.any_of
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    if where is None:
        # `+rowid`: a filter on each match, not a rowid lookup (which would rerun the MATCH once per row)
        inside = f"AND +rowid IN (SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s) " if within else ""
        sql = (f"SELECT rowid, -bm25({FTS_TABLE}, {weights}) AS score FROM {FTS_TABLE} "
               f"WHERE {FTS_TABLE} MATCH %s {inside}ORDER BY score DESC, rowid LIMIT %s")
        args = [expression, *([within] if within else []), limit]
    else:
        sql = (f"SELECT {FTS_TABLE}.rowid, -bm25({FTS_TABLE}, {weights}) AS score "
               f"FROM {FTS_TABLE} JOIN {NODE_TABLE} n ON n.id = {FTS_TABLE}.rowid "
               f"WHERE {FTS_TABLE} MATCH %s AND {where} ORDER BY score DESC, n.id LIMIT %s")
        args = [expression, *params, limit]
    with connection.cursor() as cur:
        cur.execute(sql, args)
        return [(r[0], float(r[1])) for r in cur.fetchall()]


def doc_counts(terms: Sequence[str], cap: int) -> dict[str, int]:
    """How many memories contain each term, by FTS5 (porter stems), capped at `cap`.

    A term the tokenizer makes into one token is read from the vocabulary table (`VOCAB_TABLE`: rows per token) in
    one query for all of them: the same count as a phrase MATCH of that term, min(rows, cap). A term of several
    tokens or none ("foo-bar", "***") is counted by its MATCH, as before; so is everything when the vocabulary
    table is missing. IndexUnavailable when node_fts itself is missing."""
    return doc_counts_marked(terms, cap)[0]


def doc_counts_marked(terms: Sequence[str], cap: int) -> tuple[dict[str, int], dict[str, str], str | None]:
    """`doc_counts`, with the terms read from the vocabulary table (term -> its one token) and the full-text index's
    mark (FULLTEXT_MARK_SQL) they were read at: read in the same statement, so the counts are exactly the index's
    at that mark (None, and no terms, when they took more than one statement at different marks, or none)."""
    terms = list(dict.fromkeys(terms))
    if not terms:
        return {}, {}, None
    out: dict[str, int] = {}
    single: dict[str, str] = {}
    marks: set[str | None] = set()
    with connection.cursor() as cur:
        try:
            tokens = _tokens(terms, cur)
            single = {t: tokens[t][0] for t in terms if len(tokens[t]) == 1}
            rows: dict[str, int] = {}
            wanted = sorted(set(single.values()))
            for at in range(0, len(wanted), 500):
                chunk = wanted[at:at + 500]
                cur.execute(f"SELECT term, doc FROM {VOCAB_TABLE} WHERE term IN ({', '.join(['%s'] * len(chunk))}) "
                            f"UNION ALL SELECT NULL, {FULLTEXT_MARK_SQL}", chunk)
                for term, doc in cur.fetchall():
                    if term is None:
                        marks.add(doc)
                    else:
                        rows[term] = int(doc)
            out = {t: min(rows.get(token, 0), cap) for t, token in single.items()}
        except DatabaseError:
            out, single, marks = {}, {}, set()
        for term in terms:
            if term not in out:
                out[term] = _match_count(cur, term, cap)
    mark = marks.pop() if len(marks) == 1 else None
    return out, single if mark is not None else {}, mark


VOCAB_TABLE = "node_fts_vocab"  # fts5vocab(node_fts, row): one row per token, `doc` = rows holding it (0010)
# (node_fts's tokenize= declaration, term) -> the term's tokens: fixed by the tokenizer, kept for the process. The
# declaration is in the key so two stores of one process whose node_fts tokenize differently never share an entry.
# Every prompt brings terms never asked before (its adjacent word pairs above all), so the map grows with the
# requests a worker serves: at most _TOKENS_MAX terms (all dropped when one more would pass it, ~3.5 MiB full), none
# longer than _TOKENS_TERM_CHARS characters (a pasted hash or blob: tokenized at each call), as the document counts
# of memory/search/candidates.py are bounded (rss16, docs/benchmarks.md "Served memory over time, session 26").
_TOKENS: dict[tuple[str, str], tuple[str, ...]] = {}
_TOKENS_MAX = 16_384
_TOKENS_TERM_CHARS = 64
_TOKENIZER: dict[str, object] = {}  # tokenize= -> a private in-memory FTS5 table with that tokenizer
_TOKENIZER_LOCK = threading.Lock()


def _declared_tokenize(cur) -> str:
    """node_fts's `tokenize=` argument as declared ('' when it names none); IndexUnavailable without node_fts."""
    cur.execute(f"SELECT sql FROM sqlite_master WHERE type = 'table' AND name = '{FTS_TABLE}'")
    row = cur.fetchone()
    if row is None:
        raise IndexUnavailable(
            f"The full-text table {FTS_TABLE} is missing from the index; run `ormah init` (it applies the "
            "migrations) or `ormah rebuild`.", details={"table": FTS_TABLE})
    declared = re.search(r"tokenize\s*=\s*('(?:[^']|'')*')", row[0])
    return declared.group(1) if declared else ""


def _tokens(terms: Sequence[str], cur) -> dict[str, tuple[str, ...]]:
    """Each term's tokens as node_fts's tokenizer writes them (porter stems, folded case and diacritics): read from
    an FTS5 table with node_fts's own `tokenize=` in a private in-memory database (no write to the store)."""
    tokenize = sys.intern(_declared_tokenize(cur))  # one string shared by every key, not a copy kept per call
    # one .get a term: another thread's clear() between a membership test and a read would raise KeyError
    out = {t: tokens for t in terms if (tokens := _TOKENS.get((tokenize, t))) is not None}
    new = [t for t in terms if t not in out]
    if new:
        with _TOKENIZER_LOCK:
            db = _tokenizer_db(tokenize)
            found: dict[int, list[tuple[int, str]]] = {}
            try:
                db.executemany("INSERT INTO words(rowid, w) VALUES (?, ?)", list(enumerate(new)))
                for doc, offset, term in db.execute('SELECT doc, "offset", term FROM words_v'):
                    found.setdefault(doc, []).append((offset, term))
            finally:
                db.execute("INSERT INTO words(words) VALUES ('delete-all')")  # emptied at once
        made = {t: tuple(term for _, term in sorted(found.get(i, []))) for i, t in enumerate(new)}
        kept = [(t, tokens) for t, tokens in made.items() if len(t) <= _TOKENS_TERM_CHARS]
        if len(_TOKENS) + len(kept) > _TOKENS_MAX:
            _TOKENS.clear()
        _TOKENS.update(((tokenize, t), tokens) for t, tokens in kept)
        out.update(made)
    return out


# The full-text index's mark (memory/search/candidates.py carries document counts across writes with it): FTS5's
# structure record (node_fts_data id 10: its write counter grows at every flush of a write, so it never comes back
# to a value it had) and its averages record (id 1: rows and tokens). A write that leaves the indexed columns alone
# (a row-only change: importance, access, trust) writes no FTS entry and leaves both as they were.
FULLTEXT_MARK_SQL = (f"(SELECT hex(block) FROM {FTS_TABLE}_data WHERE id = 10) || "
                     f"coalesce((SELECT hex(block) FROM {FTS_TABLE}_data WHERE id = 1), '')")


def row_tokens(rows: Sequence[Sequence[str]]) -> dict[str, int]:
    """token -> how many of `rows` ((title, content, tags_text) each, as node_fts indexes them) hold it: FTS5
    tokenizes each column alone, so a row holds the union of its columns' tokens (node_fts's tokenize=)."""
    texts = [text or "" for row in rows for text in row]
    if not texts:
        return {}
    per = len(rows[0])
    with connection.cursor() as cur:
        tokenize = _declared_tokenize(cur)
    held: dict[int, set[str]] = {}
    with _TOKENIZER_LOCK:
        db = _tokenizer_db(tokenize)
        try:
            db.executemany("INSERT INTO words(rowid, w) VALUES (?, ?)", list(enumerate(texts)))
            for doc, term in db.execute("SELECT doc, term FROM words_v"):
                held.setdefault(doc // per, set()).add(term)
        finally:
            db.execute("INSERT INTO words(words) VALUES ('delete-all')")
    out: dict[str, int] = {}
    for tokens in held.values():
        for token in tokens:
            out[token] = out.get(token, 0) + 1
    return out


def _tokenizer_db(tokenize: str):
    """The private in-memory FTS5 table with node_fts's `tokenize=` (the caller holds _TOKENIZER_LOCK)."""
    db = _TOKENIZER.get(tokenize)
    if db is None:
        # the store's own SQLite library (the stdlib's or pysqlite3, as Django's backend loaded it)
        db = connection.Database.connect(":memory:", isolation_level=None, check_same_thread=False)
        options = f", tokenize={tokenize}" if tokenize else ""
        db.execute(f"CREATE VIRTUAL TABLE words USING fts5(w, content=''{options})")  # contentless
        db.execute("CREATE VIRTUAL TABLE words_v USING fts5vocab(words, instance)")
        _TOKENIZER[tokenize] = db
    return db


def _match_count(cur, term: str, cap: int) -> int:
    """The rows (at most `cap`) matching `term` as one quoted phrase; 0 when FTS5 refuses it."""
    try:
        cur.execute(f"SELECT count(*) FROM (SELECT 1 FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s LIMIT %s)",
                    ['"' + term.replace('"', '""') + '"', cap])
        return int(cur.fetchone()[0])
    except DatabaseError:
        return 0


def evidence_fulltext(query: FtsQuery, *, match_all: bool, limit: int, where: str,
                      params: Sequence) -> list[tuple[int, str, float]]:
    """(row_id, uid, -bm25) of evidence events `e` matching the query and passing `where` (" AND ..." or "")."""
    expression = query.all_of if match_all else query.any_of
    with connection.cursor() as cur:
        cur.execute(f"SELECT e.id, e.uid, -bm25({EVIDENCE_FTS}) AS score FROM {EVIDENCE_FTS} "
                    f"JOIN {EVIDENCE_TABLE} e ON e.id = {EVIDENCE_FTS}.rowid "
                    f"WHERE {EVIDENCE_FTS} MATCH %s{where} ORDER BY score DESC, e.id LIMIT %s",
                    [expression, *params, limit])
        return [(r[0], r[1], float(r[2])) for r in cur.fetchall()]
