"""NodeOut, the API's shape of a memory: the provenance fields come from the node's provenance."""

from __future__ import annotations

from memory.schemas import NodeOut

PROVENANCE = {"workspace_path": "/work/shop", "git_branch": "release", "git_commit": "0123abcd",
              "file_path": "src/app.py", "content_sha256": "ab" * 32}


def test_node_out_carries_each_provenance_field(mem):
    node = mem("The shop port is set in src/app.py", auto_link=False, **PROVENANCE)
    out = NodeOut.from_orm(node)
    assert {name: getattr(out, name) for name in PROVENANCE} == PROVENANCE


def test_node_out_without_provenance_has_none(mem):
    out = NodeOut.from_orm(mem("Robin prefers dark mode", auto_link=False))
    assert {name: getattr(out, name) for name in PROVENANCE} == dict.fromkeys(PROVENANCE)
