"""A node file holding a NUL byte (a hand edit, a damaged copy) is malformed, on either engine (review5, session 21).

Before, SQLite indexed it, but PostgreSQL refuses NUL in text columns, so on a team server one such file made every
index sync fail (psycopg DataError): the watcher retried forever, no other edit was indexed, `ormah rebuild` failed.
The API already refuses NUL in every field (docs/security.md claim 10), so no file Ormah writes holds one."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from memory import runtime
from memory.errors import MalformedNodeFile
from memory.models import NodeRow
from memory.selectors import node_get
from memory.services import index_sync


def test_a_nul_byte_makes_the_file_malformed_and_the_sync_goes_on(mem):
    bad, good = mem("first memory about NUL", auto_link=False), mem("second memory", auto_link=False)
    store = runtime.store()
    path = store.path_for(bad.id)
    path.write_bytes(path.read_bytes().replace(b"first memory", b"first \x00memory"))
    other = store.path_for(good.id)
    other.write_bytes(other.read_bytes().replace(b"second memory", b"second memory, edited"))

    report = index_sync()

    assert [(p.rsplit("/", 1)[-1], why) for p, why in report.malformed] == [(path.name, "holds a NUL byte (byte "
                                                                          f"{path.read_bytes().index(0)})")]
    assert NodeRow.objects.get(uid=good.id).content == "second memory, edited"
    assert not NodeRow.objects.filter(uid=bad.id).exists()
    with pytest.raises(MalformedNodeFile):
        node_get(store=store, ref=bad.id)
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("doctor", "--json", stdout=out)
    checks = {c["check"]: c for c in json.loads(out.getvalue())["checks"]}
    assert "NUL" in checks["malformed_files"]["detail"]
