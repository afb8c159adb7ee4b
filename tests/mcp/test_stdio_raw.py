"""`manage.py mcp` as a subprocess spoken to with raw JSON-RPC lines, as any client writes them: a tool call whose
argument holds a lone surrogate escape (valid JSON: a JavaScript string with half an emoji, as JSON.stringify writes
it) is answered, and the memory is stored with U+FFFD in its place. The SDK's transport used to refuse the line
without answering, so the client waited for a reply that never came and the memory was lost."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from django.conf import settings

from memory.models import NodeRow
from tests.mcp.conftest import TOKEN

pytestmark = pytest.mark.slow
MANAGE = Path(settings.BASE_DIR) / "manage.py"


class RawClient:
    def __init__(self, url: str, home: Path) -> None:
        env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ORMAH_HOME": str(home / "ormah"),
               "ORMAH_API_TOKEN": TOKEN, "ORMAH_HOST": "127.0.0.1", "ORMAH_PORT": str(urlsplit(url).port),
               "ORMAH_WATCH": "false"}
        self.proc = subprocess.Popen([sys.executable, str(MANAGE), "mcp"], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, cwd=str(home))
        self.lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def send(self, line: str) -> None:
        self.proc.stdin.write(line.encode("utf-8") + b"\n")
        self.proc.stdin.flush()

    def reply(self, request_id: int, timeout: float = 30) -> dict:
        """The response to `request_id` (notifications skipped); queue.Empty when none comes in time."""
        while True:
            message = self.lines.get(timeout=timeout)
            if message.get("id") == request_id:
                return message

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def test_a_lone_surrogate_in_a_tool_argument_is_answered_and_stored(ormah_server, tmp_path):
    client = RawClient(ormah_server, tmp_path)
    try:
        client.send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}))
        assert "result" in client.reply(1)
        client.send('{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        client.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "remember", '
                    '"arguments": {"content": "The release party is on Friday \\ud83d at the office"}}}')
        try:
            answer = client.reply(2)
        except queue.Empty:
            pytest.fail("no reply to a tool call holding a lone surrogate escape")
        assert not answer["result"].get("isError"), answer
        node_id = answer["result"]["content"][0]["text"].split("ID: ")[1].split()[0]
        assert NodeRow.objects.get(uid=node_id).content == "The release party is on Friday \ufffd at the office"
        client.send('{"jsonrpc": "2.0", "id": 3, "method": "tools/list"}')
        assert len(client.reply(3)["result"]["tools"]) == 14  # the session goes on
    finally:
        client.close()
