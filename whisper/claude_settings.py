"""Wire the whisper hooks into Claude Code's settings (idempotent, with a backup). Standard library only.

Hooks written: UserPromptSubmit -> inject (timeout 10 s), PreCompact and SessionEnd -> store (300 s, `async`: the
agent does not wait for the capture). Each command carries the server's address and the token file as
environment assignments (`ORMAH_URL=... ORMAH_TOKEN_FILE=... python .../hook.py inject`), so the hook reaches the
right server whatever the agent's own environment holds. Entries a previous setup wrote (recognised by the hook
script's name) are replaced, everything else is kept as it was.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
from datetime import UTC, datetime
from pathlib import Path

MARKERS = ("whisper/hook.py", "whisper.hook", "ormah whisper")
HOOKS = (("UserPromptSubmit", "inject", 10), ("PreCompact", "store", 300), ("SessionEnd", "store", 300))


def settings_path(*, global_: bool, cwd: Path | None = None, home: Path | None = None) -> Path:
    """~/.claude/settings.json with --global, else .claude/settings.local.json in the project folder."""
    if global_:
        return (home or Path.home()) / ".claude" / "settings.json"
    return (cwd or Path.cwd()) / ".claude" / "settings.local.json"


def hook_command(sub: str, *, python: str | None = None, script: Path | None = None,
                 env: dict[str, str] | None = None) -> str:
    """The shell command running the hook script with this interpreter (no Django on the hot path)."""
    script = script or Path(__file__).resolve().with_name("hook.py")
    prefix = "".join(f"{name}={shlex.quote(value)} " for name, value in (env or {}).items())
    return f"{prefix}{shlex.quote(python or sys.executable)} {shlex.quote(str(script))} {sub}"


def _ours(entry: dict) -> bool:
    return any(any(m in str(h.get("command", "")) for m in MARKERS) for h in entry.get("hooks", []) or [])


def our_entries(*, python: str | None = None, script: Path | None = None,
                env: dict[str, str] | None = None) -> dict[str, dict]:
    """The hook entry this setup writes for each event."""
    entries = {}
    for event, sub, timeout in HOOKS:
        hook = {"type": "command", "command": hook_command(sub, python=python, script=script, env=env),
                "timeout": timeout}
        if sub == "store":
            hook["async"] = True  # capture runs in the background; the agent goes on
        entries[event] = {"hooks": [hook]} if event == "UserPromptSubmit" else {"matcher": "", "hooks": [hook]}
    return entries


def merged(settings: dict, *, python: str | None = None, script: Path | None = None,
           env: dict[str, str] | None = None) -> dict:
    """The settings with our hooks in place of any earlier ones of ours; other hooks untouched."""
    result = json.loads(json.dumps(settings))
    hooks = result.setdefault("hooks", {})
    for event, entry in our_entries(python=python, script=script, env=env).items():
        kept = [e for e in hooks.get(event, []) if not _ours(e)]
        hooks[event] = kept + [entry]
    return result


def read_json_object(path: Path) -> dict:
    """The JSON object in `path` ({} when the file does not exist); ValueError when it is not one."""
    try:
        current = json.loads(path.read_text()) if path.exists() else {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(current, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return current


def write_with_backup(path: Path, text: str, *, now: datetime | None = None) -> Path | None:
    """Replace `path` atomically with `text`, first copying an existing file to `NAME.bak-STAMP`; a symbolic link
    stays one, and the file it names is replaced."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
    # A link (settings kept in a dotfiles repository, stow, home-manager) is written through: replacing the link by a
    # file left the user's own copy without the hooks and the link gone (session 25)
    target = path.resolve() if path.is_symlink() else path
    tmp = target.with_name(f".{target.name}.tmp")
    tmp.write_text(text)
    if target.exists():
        shutil.copymode(target, tmp)
    os.replace(tmp, target)
    return backup


def install(path: Path, *, python: str | None = None, script: Path | None = None, env: dict[str, str] | None = None,
            now: datetime | None = None) -> tuple[bool, Path | None]:
    """Write the hooks into `path`; returns (changed, backup path). Unchanged settings are not rewritten."""
    current = read_json_object(path)
    wanted = merged(current, python=python, script=script, env=env)
    if wanted == current:
        return False, None
    return True, write_with_backup(path, json.dumps(wanted, indent=2) + "\n", now=now)


def hook_env() -> dict[str, str]:
    """What each hook command carries: the server's URL and the token file (never the token itself)."""
    from whisper.hook_env import ormah_home, server_url

    token_file = os.environ.get("ORMAH_TOKEN_FILE") or str(ormah_home() / "api_token")
    env = {"ORMAH_URL": server_url(), "ORMAH_TOKEN_FILE": str(Path(token_file).expanduser().resolve())}
    # With a chosen home or log folder, hook.log goes there too (the agent's environment knows neither, so the hook
    # logged to ~/.local/share/ormah/logs, a folder the user never looks in). The default home adds nothing.
    log_dir = os.environ.get("ORMAH_LOG_DIR") or (os.environ.get("ORMAH_HOME") and str(ormah_home() / "logs"))
    if log_dir:
        env["ORMAH_LOG_DIR"] = str(Path(log_dir).expanduser().resolve())
    return env
