"""recall_node on a memory whose file became malformed says so (the API's words), not "No memory with id"."""

from __future__ import annotations

import pytest

from memory import runtime
from memory.services import index_sync
from ormah_site.mcp_server import OrmahApi, build_server
from tests.mcp.conftest import TOKEN
from tests.mcp.test_tools import _call, _text

pytestmark = pytest.mark.slow


def test_recall_node_of_a_malformed_file_names_the_file(ormah_server, mem):
    node = mem("Invoices are stored in PostgreSQL 16", auto_link=False)
    path = runtime.store().path_for(node.id)
    path.write_bytes(path.read_bytes().replace(b"confidence: 1.0", b"confidence: 7"))
    index_sync()
    result = _call(build_server(api=OrmahApi(base_url=ormah_server, token=lambda: TOKEN), default_space="billing"),
                   "recall_node", {"node_id": node.id[:8]})
    assert result.isError
    assert _text(result).startswith(f"The file of memory {node.id[:8]} is malformed and left untouched: "
                                    f"memory/nodes/{path.name}: 'confidence' must be between 0 and 1 (line 3).")
