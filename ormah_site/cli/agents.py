"""`ormah setup claude|codex [--project] [--print] [--check]`: plug Ormah into an agent in one command.

Claude Code: the MCP server (`mcpServers.ormah` in ~/.claude.json, or .mcp.json with --project) and the whisper
hooks (~/.claude/settings.json, or .claude/settings.local.json with --project). Codex: the MCP server
(`[mcp_servers.ormah]` in ~/.codex/config.toml; Codex has no prompt hooks). Every command written carries the
server's URL and the token file, so it reaches the right server whatever the agent's environment holds. Each file
touched is backed up first; running setup again changes nothing. Standard library only.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from whisper import claude_settings
from whisper.hook_net import foreign_server, urlopen_direct

SERVER_NAME = "ormah"
SAMPLE_PROMPT = "What do you remember about me and my current projects?"


@dataclass(frozen=True)
class Change:
    path: Path
    what: str
    changed: bool
    backup: Path | None


def mcp_command() -> list[str]:
    """How an agent starts `ormah mcp`: the installed script next to this interpreter, else `python -P -m` (an agent
    starts it in the project's folder, and plain `-m` puts that folder first on sys.path: a project with a `whisper`
    package of its own, as a speech project has, would be imported in place of Ormah's)."""
    script = Path(sys.executable).with_name("ormah")
    return [str(script), "mcp"] if script.is_file() else [sys.executable, "-P", "-m", "ormah_site.cli", "mcp"]


def mcp_entry(env: dict[str, str]) -> dict:
    command = mcp_command()
    return {"command": command[0], "args": command[1:], "env": dict(env)}


# ---------------------------------------------------------------------------
# Claude Code
# ---------------------------------------------------------------------------

def claude_paths(*, project: bool, cwd: Path, home: Path) -> tuple[Path, Path]:
    """(hooks settings file, MCP registration file)."""
    if project:
        return cwd / ".claude" / "settings.local.json", cwd / ".mcp.json"
    return home / ".claude" / "settings.json", home / ".claude.json"


def claude_mcp_merged(current: dict, env: dict[str, str]) -> dict:
    result = json.loads(json.dumps(current))
    result.setdefault("mcpServers", {})[SERVER_NAME] = mcp_entry(env)
    return result


def claude_print(env: dict[str, str], *, project: bool, cwd: Path, home: Path) -> str:
    hooks_path, mcp_path = claude_paths(project=project, cwd=cwd, home=home)
    hooks = {"hooks": {event: [entry] for event, entry in claude_settings.our_entries(env=env).items()}}
    mcp = {"mcpServers": {SERVER_NAME: mcp_entry(env)}}
    return (f"# {mcp_path} (merged into the file: the MCP server)\n{json.dumps(mcp, indent=2)}\n\n"
            f"# {hooks_path} (merged into the file: the whisper hooks)\n{json.dumps(hooks, indent=2)}\n")


def claude_install(env: dict[str, str], *, project: bool, cwd: Path, home: Path) -> list[Change]:
    hooks_path, mcp_path = claude_paths(project=project, cwd=cwd, home=home)
    current = claude_settings.read_json_object(mcp_path)
    wanted = claude_mcp_merged(current, env)
    backup = None
    if wanted != current:
        backup = claude_settings.write_with_backup(mcp_path, json.dumps(wanted, indent=2) + "\n")
    changes = [Change(mcp_path, "MCP server", wanted != current, backup)]
    changed, backup = claude_settings.install(hooks_path, env=env)
    return [*changes, Change(hooks_path, "whisper hooks", changed, backup)]


# ---------------------------------------------------------------------------
# Codex
# ---------------------------------------------------------------------------

def codex_path(*, home: Path) -> Path:
    return home / ".codex" / "config.toml"


def _toml_string(value: str) -> str:
    return json.dumps(value)  # a TOML basic string: JSON's escapes are valid TOML


def codex_block(env: dict[str, str]) -> str:
    entry = mcp_entry(env)
    env_table = ", ".join(f"{name} = {_toml_string(value)}" for name, value in entry["env"].items())
    args = ", ".join(_toml_string(a) for a in entry["args"])
    return (f"[mcp_servers.{SERVER_NAME}]\ncommand = {_toml_string(entry['command'])}\nargs = [{args}]\n"
            f"env = {{ {env_table} }}\n")


def codex_merged(text: str, env: dict[str, str]) -> str:
    """The config text with our table in place of an earlier one (other tables kept byte for byte)."""
    header = re.compile(r"^\s*\[")
    ours = re.compile(rf"^\s*\[\s*mcp_servers\.{SERVER_NAME}\s*(\]|\.)")
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if header.match(line):
            skipping = bool(ours.match(line))
        if not skipping:
            kept.append(line)
    body = "".join(kept).rstrip("\n")
    return (body + "\n\n" if body else "") + codex_block(env)


def codex_install(env: dict[str, str], *, home: Path) -> list[Change]:
    path = codex_path(home=home)
    current = path.read_text() if path.exists() else ""
    try:
        tomllib.loads(current)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path} is not valid TOML ({exc}); fix or move it first") from None
    wanted = codex_merged(current, env)
    tomllib.loads(wanted)  # what we write must parse
    if wanted == current:
        return [Change(path, "MCP server", False, None)]
    return [Change(path, "MCP server", True, claude_settings.write_with_backup(path, wanted))]


# ---------------------------------------------------------------------------
# Self-test
# ---------------------------------------------------------------------------

def _server_problem(env: dict[str, str]) -> str | None:
    url = env["ORMAH_URL"] + "/api/agent/self?limit=1"
    problem = foreign_server(url)
    if problem:
        return problem
    try:
        token = Path(env["ORMAH_TOKEN_FILE"]).read_text().strip()
    except OSError as exc:
        return f"cannot read the token file {env['ORMAH_TOKEN_FILE']} ({exc.strerror}): run `ormah init`"
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    try:
        with urlopen_direct(request, timeout=10):
            return None
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            return f"the server at {env['ORMAH_URL']} refused the token in {env['ORMAH_TOKEN_FILE']}"
        if exc.code == 404:  # no self node yet: the server answered and took the token
            return None
        return f"the server at {env['ORMAH_URL']} answered {exc.code}" + _said(exc)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"no Ormah server answers at {env['ORMAH_URL']} ({reason}): start it with `ormah serve`"


def _said(exc: urllib.error.HTTPError) -> str:
    """': <the message of the API's JSON error>' (a 400 for a host name ALLOWED_HOSTS refuses says which), or ''."""
    try:
        message = json.loads(exc.read(4096).decode("utf-8", "replace")).get("message")
    except (OSError, ValueError, AttributeError):
        return ""
    return f": {message}" if isinstance(message, str) and message else ""


def hook_command_installed(hooks_path: Path) -> str | None:
    """The inject command setup wrote into the settings file, if any."""
    try:
        settings = claude_settings.read_json_object(hooks_path)
    except (OSError, ValueError):
        return None
    for entry in settings.get("hooks", {}).get("UserPromptSubmit", []):
        for hook in entry.get("hooks", []) or []:
            if any(m in str(hook.get("command", "")) for m in claude_settings.MARKERS):
                return hook["command"]
    return None


def run_hook(command: str, prompt: str, cwd: Path) -> str:
    """Feed the hook command a UserPromptSubmit payload as Claude Code does; what the agent would see."""
    payload = {"session_id": "ormah-setup-check", "transcript_path": "", "cwd": str(cwd),
               "hook_event_name": "UserPromptSubmit", "prompt": prompt, "permission_mode": "default"}
    done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(payload), capture_output=True, text=True,
                          timeout=30, cwd=cwd)
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def check(agent: str, env: dict[str, str], *, project: bool, cwd: Path, home: Path, prompt: str) -> tuple[bool, str]:
    """(ok, report) of the installed setup: files in place, server reachable with the token, the hook's answer."""
    lines, ok = [], True
    if agent == "claude":
        hooks_path, mcp_path = claude_paths(project=project, cwd=cwd, home=home)
        registered = SERVER_NAME in claude_settings.read_json_object(mcp_path).get("mcpServers", {})
        command = hook_command_installed(hooks_path)
        lines.append(f"MCP server in {mcp_path}: {'yes' if registered else 'no (run `ormah setup claude`)'}")
        lines.append(f"Whisper hook in {hooks_path}: {'yes' if command else 'no (run `ormah setup claude`)'}")
        ok = registered and bool(command)
    else:
        path = codex_path(home=home)
        config = tomllib.loads(path.read_text()) if path.exists() else {}
        registered = SERVER_NAME in config.get("mcp_servers", {})
        lines.append(f"MCP server in {path}: {'yes' if registered else 'no (run `ormah setup codex`)'}")
        ok, command = registered, None
    problem = _server_problem(env)
    lines.append(f"Server {env['ORMAH_URL']}: {problem or 'answers, token accepted'}")
    ok = ok and problem is None
    if command and problem is None:
        context = run_hook(command, prompt, cwd)
        lines.append(f"Sample prompt: {prompt!r}")
        lines.append("The agent would see:\n" + context if context else
                     "The agent would see nothing for it (the whisper stays silent when no memory fits the prompt; "
                     "see hook.log in the Ormah log folder if you expected one). To see a memory come back, ask "
                     "what one of yours answers: `ormah setup claude --check --prompt \"...\"`.")
    return ok, "\n".join(lines)


def describe(changes: list[Change]) -> str:
    lines = []
    for c in changes:
        if not c.changed:
            lines.append(f"{c.what}: already in place in {c.path}")
        else:
            lines.append(f"{c.what}: wrote {c.path}" + (f" (backup: {c.backup})" if c.backup else ""))
    return "\n".join(lines)


def shell_line(env: dict[str, str]) -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
