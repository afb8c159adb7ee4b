"""The MCP tool submit_feedback, in process over the SDK's memory transport, against a live API."""

from __future__ import annotations

import asyncio

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from memory.models import NodeRow
from ormah_site.mcp_server import OrmahApi, build_server
from whisper.models import AffinityRow
from whisper.services import whisper_respond

pytestmark = pytest.mark.slow
TOKEN = "mcp-token"


def call(server, tool: str, arguments: dict):
    async def go():
        async with create_connected_server_and_client_session(server) as client:
            return await client.call_tool(tool, arguments)

    return asyncio.run(go())


@pytest.fixture
def tools(live_server, transactional_db, settings, home):
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return build_server(api=OrmahApi(base_url=live_server.url, token=lambda: TOKEN), default_space="ormah")


def test_submit_feedback_records_the_signal_in_the_whisper_context(tools, mem):
    node = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    log_id = whisper_respond(prompt="How is the ormah index stored? Is it sqlite?", space="ormah").whisper_log_id
    result = call(tools, "submit_feedback", {"node_id": node.short_id, "signal": 1, "whisper_log_id": log_id})
    assert (result.isError, result.content[0].text) == (False, f"Feedback +1 recorded for {node.short_id}...")
    assert list(AffinityRow.objects.values_list("node_uid", "signal", "source", "decision_id")) == [
        (node.id, 1, "explicit", log_id)]
    assert NodeRow.objects.get(uid=node.id).access_count == 1


def test_submit_feedback_on_an_unknown_memory_is_a_tool_error(tools):
    result = call(tools, "submit_feedback", {"node_id": "abcdef12", "signal": -1})
    assert result.isError and result.content[0].text == "No memory with id abcdef12."


def test_submit_feedback_on_a_merged_away_memory_says_where_it_went(tools, mem):
    from memory.services import node_merge

    keep = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    gone = mem("The ormah index lives in SQLite (FTS5 and sqlite-vec).", space="ormah", auto_link=False)
    node_merge(keep_ref=keep.id, discard_ref=gone.id)
    result = call(tools, "submit_feedback", {"node_id": gone.short_id, "signal": 1})
    assert (result.isError, result.content[0].text) == (
        False, f"Feedback +1 recorded for {keep.short_id}... (memory {gone.short_id} was merged into it)")


def test_recall_node_by_a_merged_away_id_is_a_tool_error_naming_the_keeper(tools, mem):
    from memory.domain.node import utcnow
    from memory.services import node_merge

    keep = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    gone = mem("The ormah index lives in SQLite (FTS5 and sqlite-vec).", space="ormah", auto_link=False)
    when = utcnow()
    node_merge(keep_ref=keep.id, discard_ref=gone.id, now=when)
    result = call(tools, "recall_node", {"node_id": gone.short_id})
    assert result.isError
    assert result.content[0].text == f"Memory {gone.id} was merged into {keep.id} on {when.date().isoformat()}."
