"""A hand copy whose name sorts before the original's ("a copy.md" before "fact_..._1a2b3c4d.md"): the original, the
file named with its id's `_<shortid>.md`, is indexed and the copy is reported as a duplicate id by sync and rebuild,
whichever was indexed before; doctor lists both files."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from memory import runtime
from memory.models import NodeRow
from memory.rebuild import rebuild
from memory.selectors import node_get
from memory.services import index_sync


@pytest.fixture
def copied(mem, home):
    """A memory and a copy of its file that sorts first by name and says something else; (node, original, copy)."""
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    original = runtime.store().path_for(node.id)
    copy = original.with_name("a note copy.md")
    copy.write_text(original.read_text().replace("on Tuesdays", "on Fridays"))
    assert sorted([copy.name, original.name])[0] == copy.name
    return node, original, copy


def _assert_original_wins(report, node, original, copy) -> None:
    assert [(p, r) for p, r in report.malformed] == [
        (str(copy), f"duplicate id {node.id} (also in nodes/{original.name})")]
    assert NodeRow.objects.get(uid=node.id).file_path == f"nodes/{original.name}"
    assert "on Tuesdays" in node_get(store=runtime.store(), ref=node.id).content


def test_sync_indexes_the_original_and_reports_the_copy(copied):
    node, original, copy = copied
    _assert_original_wins(index_sync(), node, original, copy)
    _assert_original_wins(index_sync(), node, original, copy)  # and again on the next sync: nothing moves


def test_sync_moves_the_row_back_to_the_original_when_the_copy_was_indexed(copied, tmp_path):
    node, original, copy = copied
    aside = tmp_path / original.name
    original.rename(aside)
    index_sync()  # the copy is the only file of the id: it is indexed
    assert NodeRow.objects.get(uid=node.id).file_path == "nodes/a note copy.md"
    aside.rename(original)
    _assert_original_wins(index_sync(), node, original, copy)


def test_rebuild_indexes_the_original_and_reports_the_copy(copied):
    node, original, copy = copied
    _assert_original_wins(rebuild(runtime.store(), embedder=runtime.embedder(), verify=True), node, original, copy)


def test_doctor_lists_both_files(copied):
    node, original, copy = copied
    out = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("doctor", "--json", stdout=out)
    check = {c["check"]: c for c in json.loads(out.getvalue())["checks"]}["duplicate_ids"]
    assert "one is indexed: a name ending in _<8 hex>.md first, then by name" in check["detail"]
    assert f"nodes/{copy.name}" in check["detail"] and f"nodes/{original.name}" in check["detail"]
