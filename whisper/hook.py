"""The agent hook client: `python -P -m whisper.hook inject|store` (also `ormah whisper inject|store`; -P, or a project
folder with a `whisper` package of its own would be imported in its place).

Standard library only, so it starts in a few tens of milliseconds: it imports neither Django nor fastembed, and it
runs as a plain script too (`python path/to/whisper/hook.py inject`), which is how `ormah whisper setup` wires it.

inject  reads the agent's hook JSON on stdin (Claude Code UserPromptSubmit: prompt, session_id, cwd,
        transcript_path, ...), asks the server's /api/agent/whisper within a hard time limit (5 s) and prints
        {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": "..."}} or nothing.
        It then confirms delivery, and when the server says capture is due it starts `store` in the background.
store   reads {transcript_path, session_id, cwd, hook_event_name} and asks /api/agent/ingest/transcript to capture
        memories from the unread part of the transcript (PreCompact, SessionEnd and Stop capture whatever is new),
        with the workspace (git top-level, branch, commit) read from cwd as their provenance.

Whatever goes wrong, the exit status is 0 and nothing is printed: the agent's prompt is never blocked. Errors go
to hook.log in the Ormah log folder. This is a stand-alone client, so it reads its own environment:
ORMAH_URL (else ORMAH_HOST and ORMAH_PORT), ORMAH_API_TOKEN, ORMAH_TOKEN_FILE, ORMAH_HOME, ORMAH_LOG_DIR, ORMAH_SPACE, ORMAH_WHISPER_TIMEOUT.
"""

from __future__ import annotations

import os
import sys

if __package__ != "whisper":
    # Run by its path (`python …/whisper/hook.py inject`, which `ormah whisper setup` wires): this folder leaves
    # sys.path (its selectors.py would shadow the standard library's), and `whisper` is imported from the folder
    # above it (an empty __init__.py), so the hook_env and hook_net below are this copy's, not another install's.
    _FOLDER = os.path.dirname(os.path.abspath(__file__))
    if sys.path and sys.path[0] == _FOLDER:
        del sys.path[0]
    sys.path.insert(0, os.path.dirname(_FOLDER))
    try:
        import whisper  # noqa: F401
    finally:
        del sys.path[0]

import json  # noqa: E402
import logging  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

from whisper.hook_env import api_token, ormah_home, server_url, space_for, time_limit, workspace_for  # noqa: E402
from whisper.hook_net import foreign_server, urlopen_direct  # noqa: E402

STORE_TIMEOUT = 60.0
ACK_TIMEOUT = 1.0
SERVER_MARGIN = 0.25  # seconds the server's answer must leave for the way back
MAX_STDIN = 2 * 1024 * 1024
MAX_PROMPT_CHARS = 100_000  # the server's limit (whisper/api.py); a longer prompt keeps its end, where the ask is
MAX_FIELD_CHARS = {"session_id": 200, "cwd": 4096}  # the server's limits; a longer value is dropped
FINAL_EVENTS = ("PreCompact", "SessionEnd", "Stop")
# hook.log starts over past this size (the last one kept as hook.log.1): a server down for weeks added a line a
# prompt without end (session 25)
HOOK_LOG_BYTES = 1024 * 1024

logger = logging.getLogger("ormah.hook")


class HookTimeout(Exception):
    """The hard time limit passed."""


_CHECKED: set[str] = set()  # server URLs this hook process found held by no other user


class ForeignServer(Exception):
    """Another user's process listens at the server's address (foreign_server)."""


def _post(path: str, payload: dict, *, timeout: float) -> dict:
    url = server_url() + "/api/agent" + path
    if server_url() not in _CHECKED:  # once per hook process (a few ms: the kernel walks its socket table)
        problem = foreign_server(url)
        if problem:
            raise ForeignServer(problem)
        _CHECKED.add(server_url())
    headers = {"Content-Type": "application/json"}
    token = api_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url, data=json.dumps(payload).encode("utf-8"), headers=headers, method="POST")
    with urlopen_direct(request, timeout=max(0.05, timeout)) as response:
        return json.loads(response.read().decode("utf-8"))


def clean_text(value: object, limit: int | None = None) -> str | None:
    """A string the server accepts: valid UTF-8 (lone surrogates become U+FFFD), no NUL; None for a non-string."""
    if not isinstance(value, str):
        return None
    text = value.encode("utf-16", "surrogatepass").decode("utf-16", "replace").replace("\x00", "")
    if limit is not None and len(text) > limit:
        return None
    return text


def _read_stdin() -> dict:
    raw = sys.stdin.buffer.read(MAX_STDIN) if hasattr(sys.stdin, "buffer") else sys.stdin.read(MAX_STDIN)
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    data = json.loads(text or "{}")
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    for name, limit in MAX_FIELD_CHARS.items():
        if name in data:
            data[name] = clean_text(data[name], limit)
    return data


def _output(text: str) -> str:
    return json.dumps({"hookSpecificOutput": {"hookEventName": "UserPromptSubmit", "additionalContext": text}})


def inject(event: dict, *, started: float, limit: float) -> tuple[str | None, dict]:
    """Ask for a whisper: (the hook output JSON or None for silence, the server's answer). Raises on failure."""
    prompt = (clean_text(event.get("prompt")) or "")[-MAX_PROMPT_CHARS:]
    if not prompt.strip():
        return None, {}
    remaining = limit - (time.monotonic() - started)
    answer = _post("/whisper", {
        "prompt": prompt, "session_id": event.get("session_id"), "cwd": event.get("cwd"),
        "space": space_for(event.get("cwd")), "timeout_ms": max(1.0, (remaining - SERVER_MARGIN) * 1000),
    }, timeout=remaining)
    text = (answer.get("text") or "").strip()
    nudge = (answer.get("nudge") or "").strip()
    if nudge:
        text = f"{text}\n\n---\n{nudge}" if text else nudge
    return (_output(text) if text else None), answer


def after_inject(event: dict, answer: dict, *, printed: bool, started: float, limit: float) -> None:
    """Follow-ups once the output is out: confirm the delivery, start capture when the server says it is due."""
    log_id = answer.get("whisper_log_id")
    remaining = limit - (time.monotonic() - started)
    if printed and answer.get("text") and log_id is not None and remaining > 0.05:
        _post(f"/whisper/{int(log_id)}/delivered", {}, timeout=min(ACK_TIMEOUT, remaining))
    if answer.get("store_due") and event.get("transcript_path"):
        spawn_store(event)


def spawn_store(event: dict) -> None:
    """Start `store` detached, handing it the transcript fields on stdin."""
    payload = {k: event.get(k) for k in ("transcript_path", "session_id", "cwd")}
    proc = subprocess.Popen(  # noqa: S603 (our own interpreter and script)
        [sys.executable, str(Path(__file__).resolve()), "store"], stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True,
    )
    proc.stdin.write(json.dumps(payload).encode("utf-8"))
    proc.stdin.close()


def store(event: dict) -> dict | None:
    """Ask the server to capture memories from the transcript; None when there is no transcript to read."""
    path = event.get("transcript_path")
    if not isinstance(path, str) or not path:
        return None
    final = event.get("hook_event_name") in FINAL_EVENTS
    return _post("/ingest/transcript", {
        "transcript_path": path, "session_id": event.get("session_id"), "cwd": event.get("cwd"),
        "space": space_for(event.get("cwd")), "min_user_turns": 1 if final else None,
        "workspace": workspace_for(event.get("cwd")),
    }, timeout=STORE_TIMEOUT)


def _private_folder(folder: Path) -> None:
    """Make `folder` and its missing parents 0700: a hook that runs before `ormah init` creates the home, and init
    keeps a home's mode (a 0755 home and logs/ let every user read the logs)."""
    missing = []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir(mode=0o700, exist_ok=True)


def _log_to_file() -> None:
    folder = Path(os.environ.get("ORMAH_LOG_DIR") or ormah_home() / "logs").expanduser()
    try:
        _private_folder(folder)
        path = folder / "hook.log"
        try:
            if path.stat().st_size >= HOOK_LOG_BYTES:  # one older file kept, as ormah.log keeps its backups
                os.replace(path, folder / "hook.log.1")  # a hook writing meanwhile ends its line there
        except FileNotFoundError:
            pass
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)  # created private, never 0644
        try:
            if os.fstat(fd).st_mode & 0o077:
                os.fchmod(fd, 0o600)  # one an old hook left readable by others
        finally:
            os.close(fd)
        handler = logging.FileHandler(path)
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _on_alarm(signum, frame):
    raise HookTimeout()


def main(argv: list[str] | None = None) -> int:
    """Run `inject` or `store`; always exit 0."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = args[0] if args else ""
    started = time.monotonic()
    limit = time_limit() if command == "inject" else STORE_TIMEOUT + 5
    if hasattr(signal, "setitimer"):
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        event = _read_stdin()
        if command == "inject":
            output, answer = inject(event, started=started, limit=limit)
            if output:
                sys.stdout.write(output + "\n")
                sys.stdout.flush()
            after_inject(event, answer, printed=bool(output), started=started, limit=limit)
        elif command == "store":
            store(event)
        else:
            sys.stderr.write("usage: python -P -m whisper.hook inject|store < hook.json\n")
    except (HookTimeout, Exception) as exc:  # noqa: BLE001
        # Trigger: server down, slow, bad input, anything. Why: a hook must never break the agent's prompt.
        # Outcome: silence on stdout, exit 0, one line in hook.log.
        _log_to_file()
        logger.warning("hook %s failed after %.0f ms: %s: %s", command, (time.monotonic() - started) * 1000,
                       type(exc).__name__, exc)
    finally:
        if hasattr(signal, "setitimer"):
            signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
