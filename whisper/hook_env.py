"""What the hook client reads from its environment and the working folder, standard library only (whisper.hook
imports it; so do the CLI's thin path and `ormah whisper setup`): the server's URL and token, the time limit, and
the space and git workspace of the agent's working folder.

A stand-alone client reads its own environment: ORMAH_URL (else ORMAH_HOST and ORMAH_PORT), ORMAH_API_TOKEN,
ORMAH_TOKEN_FILE, ORMAH_HOME, ORMAH_SPACE, ORMAH_WHISPER_TIMEOUT (ORMAH_LOG_DIR is read by whisper.hook)."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PORT = "8787"
DEFAULT_TIMEOUT = 5.0


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def ormah_home() -> Path:
    return Path(_env("ORMAH_HOME") or Path.home() / ".local" / "share" / "ormah").expanduser()


def api_token() -> str | None:
    """ORMAH_API_TOKEN, else the token file (ORMAH_TOKEN_FILE, else $ORMAH_HOME/api_token)."""
    token = _env("ORMAH_API_TOKEN")
    if token:
        return token
    path = Path(_env("ORMAH_TOKEN_FILE") or ormah_home() / "api_token").expanduser()
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


def server_url() -> str:
    """ORMAH_URL, else http://ORMAH_HOST:ORMAH_PORT (each defaulting to the server's own 127.0.0.1 and 8787)."""
    url = _env("ORMAH_URL")
    if url:
        return url.rstrip("/")
    host = _env("ORMAH_HOST") or "127.0.0.1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"  # an IPv6 address
    return f"http://{host}:{_env('ORMAH_PORT') or DEFAULT_PORT}"


def time_limit() -> float:
    """ORMAH_WHISPER_TIMEOUT in seconds (default 5), kept between 0.1 and 10."""
    try:
        return min(10.0, max(0.1, float(_env("ORMAH_WHISPER_TIMEOUT") or DEFAULT_TIMEOUT)))
    except ValueError:
        return DEFAULT_TIMEOUT


def space_for(cwd: str | None, home: Path | None = None) -> str | None:
    """ORMAH_SPACE, else the name of cwd's git top-level folder, else cwd's name; None for the home folder or /."""
    configured = _env("ORMAH_SPACE")
    if configured:
        return configured.strip() or None
    if not cwd:
        return None
    folder = Path(cwd).expanduser()
    home = home if home is not None else Path.home()
    top = next((f for f in (folder, *folder.parents) if (f / ".git").exists()), folder)
    if top == Path(top.anchor) or top == home:
        return None
    return top.name.replace("/", "-").strip()[:100] or None


def workspace_for(cwd: str | None) -> dict | None:
    """{path, branch, commit} of the git repository around cwd (read from .git, no subprocess), or None.

    The provenance of memories captured from this session (docs/trust.md). A stand-alone copy of
    memory.context.workspace.git_head, since this client imports nothing from Ormah.
    """
    if not cwd:
        return None
    folder = Path(cwd).expanduser()
    top = next((f for f in (folder, *folder.parents) if (f / ".git").exists()), None)
    if top is None:
        return None
    found = {"path": str(top)}
    try:
        git_dir = top / ".git"
        if git_dir.is_file():
            text = git_dir.read_text(errors="replace").strip()
            git_dir = (top / text.removeprefix("gitdir:").strip()).resolve()
        head = (git_dir / "HEAD").read_text(errors="replace").strip()
        if not head.startswith("ref:"):
            return {**found, "commit": head} if head else found
        ref = head.removeprefix("ref:").strip()
        found["branch"] = ref.removeprefix("refs/heads/")
        common = git_dir
        if (git_dir / "commondir").is_file():
            common = (git_dir / (git_dir / "commondir").read_text().strip()).resolve()
        for base in (git_dir, common):
            if (base / ref).is_file():
                return {**found, "commit": (base / ref).read_text().strip()}
        for line in (common / "packed-refs").read_text(errors="replace").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref:
                return {**found, "commit": sha}
    except OSError:
        pass
    return found
