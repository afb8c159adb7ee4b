"""Maintenance fixtures: a scripted OpenAI-compatible server on 127.0.0.1, the no-LLM setting, an API client."""

from __future__ import annotations

import json
import re
import threading
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.test import Client

from memory.domain.requests import NodeCreate
from memory.services import node_create

TOKEN = "maintenance-test-token"
_PAIR = re.compile(r"^Pair (\d+):\n", re.MULTILINE)


def pair_blocks(user: str) -> dict[int, str]:
    """The text of each "Pair N:" block of a judge prompt, by N."""
    parts = _PAIR.split(user)
    return {int(parts[i]): parts[i + 1] for i in range(1, len(parts) - 1, 2)}


class ScriptedLLM:
    """Answers chat completions with `answer(kind, user) -> dict | str | (status, body)`; records every request."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.answer = lambda kind, user: {"results": []}

    @staticmethod
    def kind(system: str) -> str:
        for word, kind in (("duplicates", "duplicates"), ("conflicts", "conflicts"), ("classify", "links"),
                           ("consolidate", "consolidate")):
            if word in system.split(".")[0]:
                return kind
        return "other"

    def respond(self, body: dict) -> tuple[int, str]:
        self.requests.append(body)
        system, user = body["messages"][0]["content"], body["messages"][1]["content"]
        reply = self.answer(self.kind(system), user)
        if isinstance(reply, tuple):
            return reply
        content = reply if isinstance(reply, str) else json.dumps(reply)
        return 200, json.dumps({"id": "scripted", "object": "chat.completion", "model": body.get("model"),
                                "choices": [{"index": 0, "finish_reason": "stop",
                                             "message": {"role": "assistant", "content": content}}]})


@pytest.fixture
def llm(settings, home):
    """A real HTTP server speaking the chat-completions protocol, configured as the LLM provider."""
    script = ScriptedLLM()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            length = int(self.headers.get("Content-Length", 0))
            body = json.loads(self.rfile.read(length))
            script.headers.append(dict(self.headers))
            status, text = (404, "{}") if self.path != "/v1/chat/completions" else script.respond(body)
            data = text.encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    settings.ORMAH = {**settings.ORMAH, "LLM_PROVIDER": "openai", "LLM_MODEL": "scripted-model",
                      "LLM_BASE_URL": f"http://127.0.0.1:{server.server_address[1]}/v1", "LLM_API_KEY": "sk-test",
                      "LLM_BACKOFF_SECONDS": 0.0, "LLM_MAX_RETRIES": 1, "LLM_TIMEOUT_SECONDS": 5.0}
    yield script
    server.shutdown()
    server.server_close()


@pytest.fixture
def no_llm(settings, home):
    settings.ORMAH = {**settings.ORMAH, "LLM_PROVIDER": "none"}


@pytest.fixture
def remember(home, db):
    """remember(content, now=None, **NodeCreate fields) through the real service; auto-linking off by default."""

    def write(content: str, *, now: datetime | None = None, auto_link: bool = False, **fields):
        return node_create(request=NodeCreate(content=content, **fields), now=now, auto_link=auto_link).node

    return write


class Api:
    def __init__(self) -> None:
        self.client = Client(HTTP_AUTHORIZATION=f"Bearer {TOKEN}")

    def get(self, path: str, **params):
        return self.client.get(path, params)

    def post(self, path: str, body=None):
        return self.client.post(path, body if body is not None else {}, content_type="application/json")


@pytest.fixture
def api(settings, home, db) -> Api:
    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return Api()
