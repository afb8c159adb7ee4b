"""Wire the whisper hooks into Claude Code's settings (idempotent, with a backup). Standard library only.

Hooks written: UserPromptSubmit -> inject (timeout 10 s), PreCompact and SessionEnd -> store (300 s). Entries a
previous setup wrote (recognised by the hook script's name) are replaced, everything else is kept as it was.
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


def hook_command(sub: str, *, python: str | None = None, script: Path | None = None) -> str:
    """The shell command running the hook script with this interpreter (no Django on the hot path)."""
    script = script or Path(__file__).resolve().with_name("hook.py")
    return f"{shlex.quote(python or sys.executable)} {shlex.quote(str(script))} {sub}"


def _ours(entry: dict) -> bool:
    return any(any(m in str(h.get("command", "")) for m in MARKERS) for h in entry.get("hooks", []) or [])


def merged(settings: dict, *, python: str | None = None, script: Path | None = None) -> dict:
    """The settings with our hooks in place of any earlier ones of ours; other hooks untouched."""
    result = json.loads(json.dumps(settings))
    hooks = result.setdefault("hooks", {})
    for event, sub, timeout in HOOKS:
        kept = [e for e in hooks.get(event, []) if not _ours(e)]
        ours = {"hooks": [{"type": "command", "command": hook_command(sub, python=python, script=script),
                           "timeout": timeout}]}
        if event != "UserPromptSubmit":
            ours = {"matcher": "", **ours}
        hooks[event] = kept + [ours]
    return result


def install(path: Path, *, python: str | None = None, script: Path | None = None,
            now: datetime | None = None) -> tuple[bool, Path | None]:
    """Write the hooks into `path`; returns (changed, backup path). Unchanged settings are not rewritten."""
    try:
        current = json.loads(path.read_text()) if path.exists() else {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); fix or move it first") from None
    if not isinstance(current, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    wanted = merged(current, python=python, script=script)
    if wanted == current:
        return False, None
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(wanted, indent=2) + "\n")
    os.replace(tmp, path)
    return True, backup
