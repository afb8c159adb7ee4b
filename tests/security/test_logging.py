"""Claims: secrets never reach a log, at any level; memory content and prompts reach logs only at DEBUG
(docs/security.md §8, §9).

Secrets: a real `ormah serve` at DEBUG (network sandbox on), driven through the API, the UI sign-in, the hook and an
LLM job whose provider is down; then the API token, the secret key, the UI password and the LLM key must be absent
from ormah.log, hook.log and the server's own output. Content: the same kinds of requests in process at the
default INFO level, with a marker in every memory, query, prompt, reason and transcript; no record may hold it.
"""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from maintenance.runner import sleep_cycle_run
from tests.faults.support import Api, Served, copy_home, free_port, ui_client, wait_until
from tests.security.conftest import SANDBOX, TOKEN, signed_in

HOOK = Path(__file__).resolve().parents[2] / "whisper" / "hook.py"
LLM_KEY = "sk-ormah-test-llm-key-0123456789"
MARKER = "quokkamarmalade"


def _listening_on(port: int) -> set[str]:
    """Local addresses of LISTEN sockets on the port, from /proc/net/tcp and tcp6."""
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            local, state = line.split()[1], line.split()[3]
            address, hex_port = local.split(":")
            if state == "0A" and int(hex_port, 16) == port:
                found.add(address)
    return found


@pytest.mark.slow
def test_secrets_never_reach_a_log_even_at_debug(sandboxed, tmp_path):
    home = copy_home(sandboxed["home"], tmp_path / "home")
    net_log = tmp_path / "net.log"
    server = Served(home, extra_env={
        "ORMAH_LOG_LEVEL": "DEBUG", "ORMAH_LLM_PROVIDER": "openai", "ORMAH_LLM_MODEL": "test-model",
        "ORMAH_LLM_BASE_URL": f"http://127.0.0.1:{free_port()}/v1", "ORMAH_LLM_API_KEY": LLM_KEY,
        "ORMAH_LLM_MAX_RETRIES": "0", "PYTHONPATH": SANDBOX, "ORMAH_NET_LOG": str(net_log)})
    try:
        server.wait_ready()
        assert _listening_on(server.port) == {"0100007F"}  # 127.0.0.1 only
        api = Api(server.port, server.token)
        for content in ("The deploy happens on Tuesday mornings", "The deploy happens on Wednesday mornings"):
            assert api.call("POST", "/api/agent/remember", {"content": content})[0] == 201
        assert api.call("POST", "/api/agent/recall", {"query": "deploy"})[0] == 200
        assert api.call("POST", "/api/agent/whisper", {"prompt": "when is the deploy?", "session_id": "s"})[0] == 200
        assert Api(server.port, "wrong-token").call("GET", "/api/admin/health")[0] == 401
        assert api.call("POST", "/api/admin/tasks/conflict_detector/run", timeout=120)[0] == 200
        with httpx.Client(base_url=server.url("")) as browser:  # a failed sign-in, then a real one
            csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', browser.get("/login/").text).group(1)
            failed = browser.post("/login/", data={"username": "ormah", "password": "wrong-password",
                                                   "csrfmiddlewaretoken": csrf})
            assert failed.status_code == 200 and "csrfmiddlewaretoken" in failed.text
        ui = ui_client(server)
        assert ui.get("/search/", params={"q": f"{MARKER} deploy"}).status_code == 200
        assert ui.get("/nodes/suggest/", params={"target": MARKER}).status_code == 200
        ui.post("/logout/")
        hook_env = {"ORMAH_URL": f"http://127.0.0.1:{free_port()}", "ORMAH_API_TOKEN": server.token,
                    "ORMAH_HOME": str(home), "PATH": "/usr/bin:/bin", "PYTHONPATH": SANDBOX,
                    "ORMAH_NET_LOG": str(net_log)}  # a server that is down: the hook logs it
        subprocess.run([sys.executable, str(HOOK), "inject"], input=json.dumps({"prompt": "when is the deploy?"}),
                       env=hook_env, capture_output=True, text=True, timeout=30)
        assert wait_until(lambda: (home / "logs" / "hook.log").exists(), 10)
    finally:
        server.kill_all()

    logs = {p.name: p.read_text(errors="replace") for p in (home / "logs").iterdir()}
    logs["serve output"] = server.log_path.read_text(errors="replace")
    assert " DEBUG " in logs["ormah.log"] and "LLM call failed" in logs["ormah.log"]
    secrets = {"api token": server.token, "secret key": (home / "secret_key").read_text().strip(),
               "ui password": (home / "ui_password").read_text().strip(), "llm key": LLM_KEY}
    leaks = {(where, what) for where, text in logs.items() for what, secret in secrets.items() if secret in text}
    assert leaks == set()
    assert not net_log.exists() or net_log.read_text() == ""
    # The access log is written whatever the level: it names paths, never query strings (UI searches).
    requests = re.findall(r'"(?:GET|POST) (\S+) HTTP/1\.1"', logs["serve output"])
    assert "/search/" in requests and not [r for r in requests if "?" in r]


@pytest.fixture
def api(home, db, settings):
    from tests.api.conftest import ApiClient

    settings.ORMAH = {**settings.ORMAH, "API_TOKEN": TOKEN}
    return ApiClient(TOKEN)


def test_memory_content_and_prompts_stay_out_of_logs_at_info(api, users, caplog, tmp_path):
    caplog.set_level(logging.INFO)
    first = api.post("/api/agent/remember", {"content": f"{MARKER} one: the deploy happens on Tuesdays"}).json()
    api.post("/api/agent/remember", {"content": f"{MARKER} one: the deploy happens on Tuesdays!"})
    api.post("/api/agent/remember/batch", {"nodes": [{"content": f"{MARKER} two"}, {"content": f"{MARKER} three"}]})
    node_id = first["node"]["id"]
    api.patch(f"/api/agent/nodes/{node_id}", {"content": f"{MARKER} one, revised: deploys on Wednesdays"})
    api.post(f"/api/agent/nodes/{node_id}/outdated", {"reason": f"{MARKER} reason"})
    for query in (f"{MARKER} deploy", f'"{MARKER}', f"{MARKER} NEAR( AND OR *", f"{MARKER}^col:x"):
        api.post("/api/agent/recall", {"query": query})
        api.post("/api/agent/recall", {"query": query, "format": "text"})
    whisper = api.post("/api/agent/whisper", {"prompt": f"{MARKER}: when is the deploy?", "session_id": "s1"}).json()
    api.post("/api/agent/feedback", {"node_id": node_id, "signal": 1, "whisper_log_id": whisper["whisper_log_id"]})
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("\n".join(json.dumps({"type": "user", "message": {"role": "user", "content": text}})
                                    for text in (f"Remember that {MARKER} is our release codename.",
                                                 f"I prefer {MARKER} builds", "ok")) + "\n")
    api.post("/api/agent/ingest/transcript", {"transcript_path": str(transcript), "min_user_turns": 1})
    ui = signed_in(users["superuser"])
    ui.get("/search/", {"q": MARKER})
    ui.get(f"/nodes/{node_id}/")
    sleep_cycle_run(trigger="test")
    api.post("/api/admin/rebuild")

    assert any(r.name == "maintenance.runner" and r.levelno == logging.INFO for r in caplog.records)
    leaked = [(r.name, r.levelname, r.getMessage()[:200]) for r in caplog.records if r.levelno >= logging.INFO
              and (MARKER in r.getMessage() or MARKER in (caplog.text if r.exc_info else ""))]
    assert leaked == []
