"""`ormah mcp` through the official SDK client over stdio: every tool described and annotated; update, forget and
list_recent change and show real memories; identical content is stored once; errors are one sentence."""

from __future__ import annotations

import asyncio

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from memory.models import NodeRow
from tests.mcp.stdio import cli_params

pytestmark = pytest.mark.slow


async def _session(params: StdioServerParameters) -> dict:
    out: dict = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        out["tools"] = (await client.list_tools()).tools

        async def call(name, args):
            result = await client.call_tool(name, args)
            return result.isError, result.content[0].text

        out["first"] = await call("remember", {"content": "Invoices are generated on the 1st of each month"})
        out["again"] = await call("remember", {"content": "Invoices are generated on the 1st of each month"})
        node_id = out["first"][1].split("ID: ")[1].split()[0]
        out["id"] = node_id
        out["updated"] = await call("update_memory", {"node_id": node_id[:8],
                                                      "content": "Invoices are generated on the 2nd of each month"})
        out["listed"] = await call("list_recent", {"limit": 5})
        out["forgot"] = await call("forget", {"node_id": node_id[:8]})
        out["listed_after"] = await call("list_recent", {"limit": 5})
        out["bad"] = await call("remember", {"content": "x", "confidence": 5})
        out["missing"] = await call("recall_node", {"node_id": "ffffffff"})
        out["nothing"] = await call("update_memory", {"node_id": node_id[:8]})
    return out


def test_sdk_client_lists_annotated_tools_and_runs_update_forget_list_recent(ormah_server, tmp_path):
    out = asyncio.run(asyncio.wait_for(_session(cli_params(ormah_server, tmp_path, ORMAH_SPACE="billing")), 120))
    tools = {t.name: t for t in out["tools"]}
    assert {"remember", "recall", "recall_node", "update_memory", "forget", "mark_outdated", "connect",
            "list_recent", "context_pack", "list_proposals", "decide_proposal"} <= set(tools)
    for tool in tools.values():
        assert tool.title and len(tool.description) > 80, tool.name
        hints = tool.annotations
        assert hints is not None and hints.openWorldHint is False, tool.name
        assert None not in (hints.readOnlyHint, hints.destructiveHint, hints.idempotentHint), tool.name
        for name, spec in tool.inputSchema.get("properties", {}).items():
            assert spec.get("description"), f"{tool.name}.{name} has no description"
    assert tools["recall"].annotations.readOnlyHint and tools["forget"].annotations.destructiveHint
    assert not tools["remember"].annotations.readOnlyHint

    assert out["first"][0] is False and out["first"][1].startswith("Remembered [fact]")
    assert out["again"] == (False, out["again"][1]) and out["again"][1].startswith("Already remembered")
    assert f"ID: {out['id']}" in out["again"][1]
    assert out["updated"][0] is False and "2nd of each month" in out["updated"][1]
    assert out["id"][:8] in out["listed"][1] and "2nd of each month" in out["listed"][1]
    assert out["forgot"][0] is False and out["forgot"][1].startswith("Forgot [fact]")
    assert out["id"][:8] not in out["listed_after"][1]
    assert NodeRow.objects.filter(uid=out["id"]).count() == 0

    for is_error, text in (out["bad"], out["missing"], out["nothing"]):
        assert is_error and text.count(". ") == 0 and text.endswith(".") and "http" not in text, text
    assert out["bad"][1] == "Invalid confidence for remember: Input should be less than or equal to 1."
    assert out["missing"][1] == "No memory with id ffffffff."
