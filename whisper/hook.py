"""The agent hook client: `python -m whisper.hook inject|store` (also `ormah whisper inject|store`).

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

import sys

if __name__ == "__main__" and sys.path and sys.path[0] == __file__.rpartition("/")[0]:
    del sys.path[0]  # run as a script: this folder's selectors.py must not shadow the standard library's

import json  # noqa: E402
import logging  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import urllib.parse  # noqa: E402
import urllib.request  # noqa: E402
from pathlib import Path  # noqa: E402

DEFAULT_PORT = "8787"
DEFAULT_TIMEOUT = 5.0
STORE_TIMEOUT = 60.0
ACK_TIMEOUT = 1.0
SERVER_MARGIN = 0.25  # seconds the server's answer must leave for the way back
MAX_STDIN = 2 * 1024 * 1024
MAX_PROMPT_CHARS = 100_000  # the server's limit (whisper/api.py); a longer prompt keeps its end, where the ask is
MAX_FIELD_CHARS = {"session_id": 200, "cwd": 4096}  # the server's limits; a longer value is dropped
FINAL_EVENTS = ("PreCompact", "SessionEnd", "Stop")

logger = logging.getLogger("ormah.hook")


class HookTimeout(Exception):
    """The hard time limit passed."""


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


_MAPPED = b"\0" * 10 + b"\xff\xff"  # ::ffff:a.b.c.d, an IPv4 address in IPv6's form
_ANY = (b"\0" * 16, _MAPPED + b"\0" * 4)


def _as_ipv6(raw: bytes) -> bytes:
    return _MAPPED + raw if len(raw) == 4 else raw


def _host_addresses(host: str) -> set[bytes]:
    """The loopback addresses (16 bytes each) a URL's host name means; empty for any other host. The wildcard
    address (ORMAH_HOST=0.0.0.0 or ::, which the clients then connect to) reaches this machine's loopback too."""
    host = host.strip("[]").lower()
    if host == "localhost":
        return {_as_ipv6(bytes([127, 0, 0, 1])), b"\0" * 15 + b"\1"}
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            raw = _as_ipv6(socket.inet_pton(family, host))
        except OSError:
            continue
        if raw in _ANY:
            return _host_addresses("localhost")
        return {raw} if raw == b"\0" * 15 + b"\1" or (raw.startswith(_MAPPED) and raw[12] == 127) else set()
    return set()


def _tcp_sockets():
    """(state, local address, local port, remote address, remote port, uid) of every TCP socket of this network
    namespace, from Linux's /proc/net/tcp and tcp6 (addresses as 16 bytes; the files hold 32-bit words in the host's
    byte order); nothing where those files do not exist."""
    for name in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(name, encoding="ascii") as rows:
                next(rows, None)
                for row in rows:
                    fields = row.split()
                    if len(fields) < 8:
                        continue
                    ends = []
                    for end in (fields[1], fields[2]):
                        address, _, hex_port = end.partition(":")
                        raw = bytes.fromhex(address)
                        if sys.byteorder == "little":
                            raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                        ends += [_as_ipv6(raw), int(hex_port, 16)]
                    yield (fields[3], *ends, int(fields[7]))
        except (OSError, ValueError):
            continue


def _listeners(port: int) -> list[tuple[bytes, int]]:
    """(address as 16 bytes, uid) of every socket listening on TCP `port` (0A: LISTEN)."""
    return [(address, uid) for state, address, at, _, _, uid in _tcp_sockets() if state == "0A" and at == port]


def _packed(address: str) -> bytes | None:
    for family in (socket.AF_INET, socket.AF_INET6):
        try:
            return _as_ipv6(socket.inet_pton(family, address.split("%")[0]))
        except OSError:
            continue
    return None


def connection_user(client: tuple, server: tuple) -> int | None:
    """The uid of the process whose socket at `client` (address, port) is connected to `server` (address, port) on
    this machine: the client's end of a loopback connection, as a server sees it (getpeername, getsockname). None
    when no such socket is on this machine (a remote client) or /proc/net/tcp does not exist (not Linux)."""
    peer, here = _packed(client[0]), _packed(server[0])
    if peer is None or here is None:
        return None
    for state, address, at, remote, remote_port, uid in _tcp_sockets():
        if state == "01" and at == client[1] and remote_port == server[1] and address == peer and remote == here:
            return uid  # 01: ESTABLISHED
    return None


def foreign_server(url: str, *, uid: int | None = None) -> str | None:
    """Why nothing may be sent to `url`, or None. On this machine's loopback any user can listen on a free port:
    while Ormah is not running, another user's process on its port would be sent the API token (the key to every
    memory) and every prompt. So when the server's address is a loopback one, the process listening there must be
    this user's (`uid`, default the caller's) or root's (Docker's port forwarder); any other is refused before a
    byte is sent. Linux only (/proc/net/tcp); elsewhere nothing is checked. A process that binds the port in the
    instant between this check and the connection is not caught: a squatter that holds the port is."""
    parts = urllib.parse.urlsplit(url)
    addresses = _host_addresses(parts.hostname or "")
    if not addresses:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    mine = {os.getuid() if uid is None else uid, 0}
    strangers = sorted({owner for address, owner in _listeners(port)
                        if (address in addresses or address in _ANY) and owner not in mine})
    if not strangers:
        return None
    return (f"another user's process (uid {strangers[0]}) listens at {parts.hostname}:{port}, where this Ormah "
            "server should be: it is sent neither the API token nor any request. Stop it, or run `ormah serve` "
            "on another port (ORMAH_PORT, ORMAH_URL)")


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def urlopen_direct(request: urllib.request.Request, *, timeout: float):
    """urllib's urlopen without proxies: the server is on this machine, and urllib sends a loopback URL through the
    proxy of HTTP_PROXY / http_proxy unless no_proxy names it, which would hand the proxy the token and the prompt."""
    return _DIRECT.open(request, timeout=timeout)


_CHECKED: set[str] = set()  # server URLs this hook process found held by no other user


class ForeignServer(Exception):
    """Another user's process listens at the server's address (foreign_server)."""


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
    folder = Path(_env("ORMAH_LOG_DIR") or ormah_home() / "logs").expanduser()
    try:
        _private_folder(folder)
        path = folder / "hook.log"
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
            sys.stderr.write("usage: python -m whisper.hook inject|store < hook.json\n")
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
