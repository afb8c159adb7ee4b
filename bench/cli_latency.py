"""CLI wall and CPU time per command, through the running server (thin path) and in-process (no server).

    python -m bench.cli_latency [--repeat 5] [--write]

A temporary ORMAH_HOME is initialised and served (`ormah serve --no-cluster --no-watch` on a free port) with a
few memories. Each command runs as a fresh `python -m ormah_site.cli` process, as a shell would run it: `--repeat`
times against the server (median), then once with ORMAH_PORT pointing at a port where nothing listens (the
in-process fallback: Django and the model start in the command's own process). The floor is `python -c pass`
measured in the same run. CPU is the child's user+system time (getrusage), steadier than wall on a shared box.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._common import machine, write_block



def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def timed(cmd: list[str], env: dict, stdin: str | None = None) -> tuple[float, float, str]:
    """(wall ms, child CPU ms, stdout) of one process run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True, timeout=600)
    wall = (time.perf_counter() - start) * 1000
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) * 1000
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {out.stderr.strip()}")
    return wall, cpu, out.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="server-path runs per command (median reported)")
    parser.add_argument("--write", action="store_true",
                        help="replace its marked block in the CLI section of docs/benchmarks.md")
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="ormah-bench-cli-"))
    port = free_port()
    env = {**os.environ, "ORMAH_HOME": str(root / "home"), "ORMAH_PORT": str(port), "ORMAH_LOG_LEVEL": "WARNING",
           "ORMAH_API_TOKEN": ""}
    for key in ("ORMAH_URL", "ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_SPACE"):
        env.pop(key, None)
    ormah = [sys.executable, "-m", "ormah_site.cli"]
    subprocess.run([*ormah, "init", "--quiet"], env=env, check=True, timeout=600)
    server = subprocess.Popen([*ormah, "serve", "--no-cluster", "--no-watch"], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.2)
        first = timed([*ormah, "remember", "The staging database listens on port 5433", "--json"], env)[2]
        node = first.split('"id": "')[1][:36]
        other = timed([*ormah, "remember", "Deploys go out on Tuesdays", "--type", "decision", "--json"], env)[2]
        target = other.split('"id": "')[1][:36]
        timed([*ormah, "recall", "warm up the model"], env)
        commands = {
            "remember": ["remember", "I prefer tabs over spaces", "--about-self"],
            "recall": ["recall", "which port does staging use"],
            "show": ["show", node[:8]],
            "connect": ["connect", node[:8], target[:8], "--edge", "related_to"],
            "outdated": ["outdated", target[:8], "--reason", "bench"],
            "self": ["self"],
            "context-pack": ["context-pack", "staging database"],
            "forget": ["forget", target[:8]],
            "whisper inject": ["whisper", "inject"],
        }
        prompt = '{"prompt": "what port is the staging database on?", "session_id": "bench", "cwd": "/tmp"}'
        floor = [timed([sys.executable, "-c", "pass"], env) for _ in range(args.repeat)]
        rows = []
        for name, argv in commands.items():
            stdin = prompt if name == "whisper inject" else None
            runs = []
            for _ in range(args.repeat if name not in ("forget", "outdated") else 1):
                runs.append(timed([*ormah, *argv], env, stdin))
                if name == "remember":
                    argv = [*argv[:1], argv[1] + "!", *argv[2:]]
            if name == "forget":
                timed([*ormah, "forget", "--restore", target], env)
            down = {**env, "ORMAH_PORT": str(free_port())}
            if name == "whisper inject":
                local = (float("nan"), float("nan"))  # the hook never runs the model in the agent's prompt path
            else:
                local = timed([*ormah, *argv], down, stdin)[:2]
            rows.append((name, statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs), *local))
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=60)
    facts = machine(root)
    shutil.rmtree(root, ignore_errors=True)
    load = os.getloadavg()
    floor_wall = statistics.median(f[0] for f in floor)
    floor_cpu = statistics.median(f[1] for f in floor)
    lines = [f"`python -m bench.cli_latency --repeat {args.repeat}`; load average {load[0]:.2f} / {load[1]:.2f} / "
             f"{load[2]:.2f} at the end. Each command is a fresh process, as from a shell. Server path: median of "
             f"{args.repeat} runs (forget and outdated: 1) against `ormah serve`; in-process: one run with no server "
             "answering (Django and the model start in the command). Floor: `python -c pass` in the same run, "
             f"{floor_wall:.0f} ms wall, {floor_cpu:.0f} ms CPU.", "",
             "| command | server wall ms | server CPU ms | CPU / floor | in-process wall ms | in-process CPU ms |",
             "|---|---:|---:|---:|---:|---:|"]
    for name, wall, cpu, lwall, lcpu in rows:
        local = f"{lwall:.0f} | {lcpu:.0f}"
        if lwall != lwall:
            local = "- | - (no server: the hook stays silent)"
        lines.append(f"| {name} | {wall:.0f} | {cpu:.0f} | {cpu / max(floor_cpu, 1):.1f}x | {local} |")
    machine_md = ", ".join(f"{k} {v}" for k, v in facts.items() if k != "executable")
    lines += ["", f"Machine: {machine_md}."]
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_block("cli_latency", text)


if __name__ == "__main__":
    main()
