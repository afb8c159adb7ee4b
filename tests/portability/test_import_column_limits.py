"""`ormah import` of a memory file the store would read as malformed (session 22, review8): a tag over 64
characters, an access_count above 2147483647, ... parsed, so the import wrote it and counted it as imported, and the
store then left it out of the index (reported malformed on every sync; on PostgreSQL on every host). It is skipped
with its reason now, as a file that does not parse."""

from __future__ import annotations

from dataclasses import replace

from memory.domain.markdown import render
from memory.domain.node import Node, new_node_id, utcnow
from memory.models import NodeRow
from memory.services import memory_import


def _node(content: str, **fields) -> Node:
    now = utcnow()
    node = Node(id=new_node_id(), type="fact", tier="working", content=content, created=now, updated=now,
                last_accessed=now, source="person:dana")
    return replace(node, **fields)


def test_a_file_over_the_index_columns_is_skipped_with_its_reason(home, db, tmp_path):
    nodes = tmp_path / "export" / "nodes"
    nodes.mkdir(parents=True)
    good = _node("The staging database listens on port 5433")
    counted = _node("Read far too often", access_count=2**31)
    tagged = _node("Tagged far too long", tags=("t" * 65,))
    for node in (good, counted, tagged):
        (nodes / f"fact_{node.short_id}.md").write_text(render(node), encoding="utf-8")

    report = memory_import(path=tmp_path / "export")

    assert report.imported == [good.id]
    assert sorted(why for _, why in report.skipped) == ["a tag longer than 64 characters",
                                                         "an access_count above 2147483647"]
    assert list(NodeRow.objects.values_list("uid", flat=True).exclude(is_self=True)) == [good.id]
    assert sorted(p.name for p in (home / "memory" / "nodes").glob("fact_*.md")) == [f"fact_{good.short_id}.md"]


def test_a_file_holding_a_nul_byte_is_skipped_with_its_reason(home, db, tmp_path):
    # session 22 (review10): the store reads such a file as malformed ("holds a NUL byte"), as it does a file over the
    # columns; the import parsed it, wrote it and counted it imported, and no sync indexed it
    nodes = tmp_path / "export" / "nodes"
    nodes.mkdir(parents=True)
    good, pasted = _node("The staging database listens on port 5433"), _node("binary output \x00 pasted")
    for node in (good, pasted):
        (nodes / f"fact_{node.short_id}.md").write_text(render(node), encoding="utf-8")

    report = memory_import(path=tmp_path / "export")

    assert report.imported == [good.id]
    assert [why.split(" (")[0] for _, why in report.skipped] == ["holds a NUL byte"]
    assert sorted(p.name for p in (home / "memory" / "nodes").glob("fact_*.md")) == [f"fact_{good.short_id}.md"]
