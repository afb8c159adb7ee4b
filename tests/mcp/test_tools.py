"""The MCP tools in-process (the SDK's memory transport) against a live API: text an agent reads, clear errors."""

from __future__ import annotations

import asyncio
import socket

import pytest
from mcp.shared.memory import create_connected_server_and_client_session

from memory import runtime
from memory.selectors import node_get
from ormah_site.mcp_server import OrmahApi, api_base_url, build_server, client_space, not_running_message
from tests.mcp.conftest import TOKEN

pytestmark = pytest.mark.slow


def _call(server, tool: str, arguments: dict | None = None):
    async def go():
        async with create_connected_server_and_client_session(server) as client:
            return await client.call_tool(tool, arguments or {})

    return asyncio.run(go())


def _text(result) -> str:
    return result.content[0].text


@pytest.fixture
def tools(ormah_server):
    return build_server(api=OrmahApi(base_url=ormah_server, token=lambda: TOKEN), default_space="billing")


def test_the_tools_are_listed():
    server = build_server(api=OrmahApi(base_url="http://127.0.0.1:9"), default_space=None)
    names = [t.name for t in asyncio.run(server.list_tools())]
    assert names == ["remember", "recall", "recall_node", "update_memory", "forget", "mark_outdated", "connect",
                     "list_recent", "get_self", "context_pack", "list_proposals", "proposal_result", "decide_proposal",
                     "submit_feedback"]


def test_remember_files_under_the_detected_space_unless_told_otherwise(tools):
    result = _call(tools, "remember", {"content": "Invoices are stored in PostgreSQL 16", "type": "decision",
                                       "tags": ["db"]})
    assert not result.isError
    text = _text(result)
    assert text.startswith("Remembered [decision]: Invoices are stored in PostgreSQL 16\nID: ")
    node = node_get(store=runtime.store(), ref=text.split("ID: ")[1].split()[0])
    assert (node.space, node.source, node.tags) == ("billing", "agent:mcp", ("db",))
    global_text = _text(_call(tools, "remember", {"content": "Dana writes in British English", "space": "global"}))
    assert node_get(store=runtime.store(), ref=global_text.split("ID: ")[1].split()[0]).space is None


def test_remember_then_recall_finds_it(tools):
    _call(tools, "remember", {"content": "The staging database is reset every Sunday night"})
    text = _text(_call(tools, "recall", {"query": "when is staging reset"}))
    assert text.startswith("Found ")
    assert "The staging database is reset every Sunday night" in text


def test_recall_node_shows_connections_and_counts_as_use(tools):
    a = _text(_call(tools, "remember", {"content": "Deploys happen on Tuesdays", "type": "procedure"}))
    a_id = a.split("ID: ")[1].split()[0]
    b = _text(_call(tools, "remember", {"content": "The release checklist lives in docs/release.md",
                                        "links": [a_id]}))
    b_id = b.split("ID: ")[1].split()[0]
    text = _text(_call(tools, "recall_node", {"node_id": a_id[:8]}))
    assert text.splitlines()[:2] == ["## [procedure] Deploys happen on Tuesdays", f"ID: {a_id}"]
    assert f"← related_to (0.5) {b_id}  The release checklist lives in docs/release.md" in text
    assert node_get(store=runtime.store(), ref=a_id).access_count == 1


def test_mark_outdated_and_connect(tools):
    a_id = _text(_call(tools, "remember", {"content": "We deploy on Tuesdays"})).split("ID: ")[1].split()[0]
    b_id = _text(_call(tools, "remember", {"content": "We deploy every day"})).split("ID: ")[1].split()[0]
    assert _text(_call(tools, "connect", {"source_id": b_id, "target_id": a_id, "edge": "evolved_from"})) == (
        f"Connected {b_id[:8]}... →[evolved_from]→ {a_id[:8]}...")
    assert _text(_call(tools, "mark_outdated", {"node_id": a_id, "reason": "daily now"})) == (
        f"Marked outdated: We deploy on Tuesdays\nID: {a_id}")
    assert node_get(store=runtime.store(), ref=a_id).valid_until is not None


def test_get_self_lists_what_defines_the_user(tools):
    _call(tools, "remember", {"content": "Dana prefers tabs over spaces", "type": "preference",
                              "about_self": True})
    text = _text(_call(tools, "get_self"))
    assert text.splitlines()[0] == "## Self: Dana"
    assert "- [preference] Dana prefers tabs over spaces: Dana prefers tabs over spaces" in text


def test_api_errors_come_back_as_tool_errors(tools):
    result = _call(tools, "recall_node", {"node_id": "ffffffff"})
    assert result.isError
    assert _text(result) == "No memory with id ffffffff."
    traversal = _call(tools, "recall_node", {"node_id": "../../admin/rebuild"})
    assert traversal.isError
    assert _text(traversal) == "'../../admin/rebuild' is not an id or an id prefix (hex digits and dashes)."


def test_a_forgotten_memory_says_how_to_bring_it_back(tools):
    """recall_node and update_memory of a forgotten id say what the API, the CLI and the web UI say (session 24);
    the bare 'No memory with id' left the agent and the user at a dead end."""
    made = _text(_call(tools, "remember", {"content": "The staging database listens on port 6543"}))
    node_id = made.split("ID: ")[1].split()[0]
    assert not _call(tools, "forget", {"node_id": node_id}).isError
    for tool, args in [("recall_node", {}), ("update_memory", {"content": "port 6544"})]:
        result = _call(tools, tool, {"node_id": node_id[:8], **args})
        assert result.isError
        assert _text(result) == (f"No memory with id {node_id[:8]}: it was forgotten; "
                                 f"`ormah forget --restore {node_id[:8]}` brings it back.")


def test_a_wrong_token_says_how_to_fix_it(ormah_server):
    server = build_server(api=OrmahApi(base_url=ormah_server, token=lambda: "wrong"), default_space=None)
    assert "refused the API token" in _text(_call(server, "get_self"))


def test_a_server_that_is_not_running_says_how_to_start_it():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    server = build_server(api=OrmahApi(base_url=url, token=lambda: TOKEN), default_space=None)
    result = _call(server, "recall", {"query": "anything"})
    assert result.isError
    assert _text(result) == not_running_message(url)
    assert not_running_message("http://127.0.0.1:8787") == (
        "Ormah server not running at http://127.0.0.1:8787. Start it with: make run (or ormah serve)")


@pytest.mark.parametrize("host,url", [("127.0.0.1", "http://127.0.0.1:8787"), ("0.0.0.0", "http://127.0.0.1:8787"),
                                      ("::1", "http://[::1]:8787"), ("localhost", "http://localhost:8787")])
def test_the_api_url_comes_from_the_server_settings(settings, host, url):
    settings.HOST, settings.PORT = host, 8787
    assert api_base_url() == url


def test_the_client_space_prefers_ormah_space(settings, tmp_path):
    settings.ORMAH = {**settings.ORMAH, "SPACE": "billing"}
    assert client_space(tmp_path) == "billing"
    settings.ORMAH = {**settings.ORMAH, "SPACE": None}
    assert client_space(tmp_path / "notes") == "notes"


def test_a_server_that_never_answers_times_out_with_a_message():
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        server = build_server(api=OrmahApi(base_url=url, token=lambda: TOKEN, timeout=0.5), default_space=None)
        result = _call(server, "get_self")
    assert result.isError
    assert _text(result) == f"Ormah at {url} did not answer within 0.5 s"
