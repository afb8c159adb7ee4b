"""A hand-edited node file whose tag, space or source is longer than the API allows (or whose access_count or
authority is above the index's integer column) is malformed, on either engine
(session 21, found by CI on PostgreSQL): its varchar columns refused the row, so one such file made every index sync
fail there (psycopg StringDataRightTruncation), while SQLite kept what no API write can make."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.models import NodeRow
from memory.services import index_sync


@pytest.mark.parametrize(("field", "value", "reason"), [
    ("tags", '["' + "t" * 65 + '"]', "a tag longer than 64 characters"),
    ("space", "s" * 101, "a space longer than 100 characters"),
    # session 22 (review8, a team server): PostgreSQL's integer column refused it ("integer out of range"), so the
    # index sync failed on every run; SQLite stored it (and past 2**63 failed with an OverflowError)
    ("access_count", str(2**31), "an access_count above 2147483647"),
    ("authority", str(2**63), "an authority above 2147483647"),
])
def test_an_overlong_field_makes_the_file_malformed_and_the_sync_goes_on(mem, field, value, reason):
    bad, good = mem("first memory about long tags", auto_link=False), mem("second memory", auto_link=False)
    store = runtime.store()
    path = store.path_for(bad.id)
    text = path.read_text()
    head, _, body = text.partition("\n---\n")
    lines = [line for line in head.split("\n") if not line.startswith(f"{field}:")]
    path.write_text("\n".join(lines) + f"\n{field}: {value}\n---\n" + body)
    before = path.read_bytes()
    other = store.path_for(good.id)
    other.write_text(other.read_text().replace("second memory", "second memory, edited"))

    report = index_sync()

    assert [(p.rsplit("/", 1)[-1], why) for p, why in report.malformed] == [(path.name, reason)]
    assert NodeRow.objects.get(uid=good.id).content.startswith("second memory, edited")
    assert not NodeRow.objects.filter(uid=bad.id).exists()
    assert path.read_bytes() == before  # reported and left untouched
