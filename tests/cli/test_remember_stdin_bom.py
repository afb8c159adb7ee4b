"""`ormah remember -` reading a file saved with a UTF-8 byte order mark (`ormah remember - < note.txt` from Windows
Notepad) stores the text without the mark (review5, session 21): it began the memory's content, its auto title and
its first word, and made the same note typed by hand no exact duplicate of it."""

from __future__ import annotations

import io
import sys

from memory.models import NodeRow
from ormah_site.cli import thin
from ormah_site.cli.parser import build_parser
from tests.support.ports import free_port


def test_remember_from_stdin_drops_a_byte_order_mark(home, transactional_db, monkeypatch):
    # transactional_db: the in-process API is a real WSGI request, whose request_started closes the connection; on
    # PostgreSQL a connection closed inside the `db` fixture's atomic block stays closed (SQLite's reopens)
    monkeypatch.setenv("ORMAH_URL", f"http://127.0.0.1:{free_port()}")  # no server there: the in-process API answers
    monkeypatch.setattr(sys, "stdin", io.StringIO("\ufeffThe boiler is serviced every March\r\n"))
    options = build_parser("test").parse_args(["remember", "-"])

    thin.remember(options)

    assert list(NodeRow.objects.values_list("content", flat=True)) == ["The boiler is serviced every March\r\n"]
