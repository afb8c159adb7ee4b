"""What a node file's bytes hold, checked as the store reads them: UTF-8, no NUL byte, what `parse` accepts, and
the index's column limits. Pure: no Django, no I/O (memory.store reads the bytes; `ormah import` and `ormah sync
PATH` check with this what they write)."""

from __future__ import annotations

from pathlib import Path

from memory.domain.markdown import parse
from memory.domain.node import Node
from memory.domain.requests import MAX_SOURCE_CHARS, MAX_SPACE_CHARS, MAX_TAG_CHARS
from memory.errors import MalformedNodeFile


def parse_bytes(data: bytes, path: Path | str) -> Node:
    """The memory a node file's bytes hold, as the store reads it; raises MalformedNodeFile saying why not (not UTF-8,
    a NUL byte, a field the index's columns refuse, or what `parse` refuses). What writes a file it did not make
    (`ormah import`, `ormah sync PATH`) checks with this, so nothing it writes is malformed to the store."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MalformedNodeFile(path=path, reason=f"not valid UTF-8 (byte {exc.start})") from None
    if "\x00" in text:  # PostgreSQL refuses NUL in text (every sync would fail), and the API refuses it in any field
        raise MalformedNodeFile(path=path, reason=f"holds a NUL byte (byte {data.index(0)})")
    node = parse(text, source=str(path))
    check_columns(node, path)
    return node


MAX_INDEX_INT = 2**31 - 1  # access_count and authority are IntegerField: PostgreSQL's integer, 4 bytes


def check_columns(node: Node, path: Path | str) -> None:
    """A hand-edited tag, space or source longer than the API allows, or a count above the index's integer column,
    is malformed: PostgreSQL's columns refuse it (every sync would fail on the one file), SQLite would keep what no
    API write can make (or, past 2**63, fail too)."""
    for tag in node.tags:
        if len(tag) > MAX_TAG_CHARS:
            raise MalformedNodeFile(path=path, reason=f"a tag longer than {MAX_TAG_CHARS} characters")
    if node.space is not None and len(node.space) > MAX_SPACE_CHARS:
        raise MalformedNodeFile(path=path, reason=f"a space longer than {MAX_SPACE_CHARS} characters")
    if len(node.source) > MAX_SOURCE_CHARS:
        raise MalformedNodeFile(path=path, reason=f"a source longer than {MAX_SOURCE_CHARS} characters")
    for key, count in (("access_count", node.access_count), ("authority", node.authority)):
        if count > MAX_INDEX_INT:
            raise MalformedNodeFile(path=path, reason=f"an {key} above {MAX_INDEX_INT}")
