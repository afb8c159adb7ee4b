"""The serve supervisor: runs the parts of `ormah serve`, restarts a dead part with backoff, and takes every process
of its tree with it when it stops or dies.

Restart policy (docs/architecture.md, "Processes"): a part that exits while the server runs is started again
after 0.5 s, then 1, 2, 4 ... up to 30 s while it keeps dying quickly; a part that ran for `STABLE_SECONDS` counts
as healthy again and its next restart is quick. The other parts keep running meanwhile, so a dead job cluster
never takes the web API down. Each part runs in its own process group with a death signal (ormah_site.lifeline),
so a SIGKILLed supervisor leaves no process behind and a stop reaches the part's whole subtree. A part may start
at a lower scheduling priority (`Part.nice`, inherited by its forks): the job cluster does, so its jobs get the CPU
the agents' requests leave.

`ormah serve` does its Django work (the schedules sync) and then replaces itself (`exec_supervisor`, same pid) with
`python -m ormah_site.supervisor SPEC`: this module imports only the standard library, ormah_site.lifeline and
ormah_site.logfiles, so the process that outlives everything holds no Django and no app code (86 MiB of RSS
before, docs/benchmarks.md).
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ormah_site import lifeline
from ormah_site.logfiles import SharedRotatingFileHandler

logger = logging.getLogger(__name__)

FIRST_DELAY = 0.5
MAX_DELAY = 30.0
STABLE_SECONDS = 30.0
STOP_GRACE_SECONDS = 15.0


@dataclass
class Part:
    """One supervised process: its command, and its restart state."""

    name: str
    argv: Sequence[str]
    nice: int = 0  # added to the part's scheduling niceness (inherited by everything it forks)
    proc: subprocess.Popen | None = None
    started_at: float = 0.0
    quick_failures: int = 0
    restart_at: float | None = None
    restarts: int = 0
    history: list[int] = field(default_factory=list)  # exit statuses, newest last

    def delay(self) -> float:
        """The wait before the next start, from the count of quick failures in a row."""
        return min(MAX_DELAY, FIRST_DELAY * 2 ** max(0, self.quick_failures - 1))


class Supervisor:
    """Start, watch, restart and stop a fixed set of parts (call `run` from the main thread)."""

    def __init__(self, parts: Sequence[Part], *, env: dict[str, str], cwd: Path,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.parts = list(parts)
        self.env, self.cwd, self.clock = env, cwd, clock
        self.stopping: int | None = None

    # -- life ---------------------------------------------------------------

    def start(self, part: Part) -> None:
        """Start one part in its own process group, armed to die with this process."""
        part.proc = subprocess.Popen(list(part.argv), env=self.env, cwd=self.cwd, process_group=0,
                                     preexec_fn=_preexec(os.getpid(), part.nice))
        part.started_at, part.restart_at = self.clock(), None
        logger.info("Started %s (pid %s)", part.name, part.proc.pid)

    def check(self) -> None:
        """Notice parts that died and start the ones whose backoff has passed (one pass of the loop)."""
        now = self.clock()
        for part in self.parts:
            if part.proc is not None and part.proc.poll() is not None:
                status = part.proc.returncode
                part.history.append(status)
                ran = now - part.started_at
                part.quick_failures = 1 if ran >= STABLE_SECONDS else part.quick_failures + 1
                part.proc, part.restart_at = None, now + part.delay()
                logger.warning("The %s process exited with status %s after %.0f s; restarting it in %.1f s",
                               part.name, status, ran, part.delay())
            if part.proc is None and part.restart_at is not None and now >= part.restart_at:
                part.restarts += 1
                self.start(part)

    def run(self, *, tick: float = 0.2) -> None:
        """Start every part, then supervise until SIGINT or SIGTERM; stop the parts on the way out."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            for part in self.parts:
                self.start(part)
            while self.stopping is None:
                self.check()
                time.sleep(tick)
        finally:
            self.stop()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def stop(self) -> None:
        """SIGTERM each part's leader, wait up to the grace period, then SIGKILL what is left of its process group.

        Only the leader (gunicorn's master, the job cluster's main) gets the SIGTERM: each stops its own children
        in order. Sent to the whole group, it killed django-q's sentinel outright (its SIGTERM is the default action)
        while the cluster's main was stopping it, and the main then waited on a lock the sentinel died holding until
        the grace ran out: every stop took 15 s and logged a warning."""
        running = [p for p in self.parts if p.proc is not None and p.proc.poll() is None]
        for part in running:
            try:
                part.proc.send_signal(signal.SIGTERM)
            except ProcessLookupError:
                pass
        deadline = self.clock() + STOP_GRACE_SECONDS
        for part in running:
            try:
                part.proc.wait(timeout=max(0.1, deadline - self.clock()))
            except subprocess.TimeoutExpired:
                logger.warning("The %s process did not stop in %.0f s; killing it", part.name, STOP_GRACE_SECONDS)
        for part in self.parts:
            if part.proc is not None:
                _signal_group(part.proc, signal.SIGKILL)  # stragglers of the part's tree, even after it exited
                part.proc.wait()

    def _on_signal(self, signum, frame) -> None:
        self.stopping = signum


def _preexec(supervisor: int, nice: int):
    """The `preexec_fn` of a part: the death signal (ormah_site.lifeline), then the part's niceness."""
    arm = lifeline.preexec(supervisor)
    if not nice:
        return arm

    def run() -> None:
        if arm is not None:
            arm()
        os.nice(nice)

    return run


def _signal_group(proc: subprocess.Popen, sig: int) -> None:
    try:
        os.killpg(proc.pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


# -- the lean process -----------------------------------------------------------------------------------------

LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"  # settings.LOGGING's "plain"


def exec_supervisor(parts: Sequence[Part], *, env: dict[str, str], cwd: Path, log_file: Path | None,
                    log_level: str) -> None:
    """Replace this process (same pid, so signals and a parent's wait still reach it) by a Django-free supervisor
    of `parts`; does not return. Call it after closing database connections."""
    spec = {"parts": [[p.name, list(p.argv), p.nice] for p in parts], "cwd": str(cwd),
            "log_file": str(log_file) if log_file else None, "log_level": log_level}
    sys.stdout.flush()
    sys.stderr.flush()
    # `-m` puts the current folder first on sys.path: from a project's folder holding a json.py (or signal.py, ...)
    # the supervisor imported that instead of the standard library's and `ormah serve` died. It starts where its
    # parts run, the code's own folder (serve_environment made the paths in `env` absolute first).
    os.chdir(cwd)
    os.execve(sys.executable, [sys.executable, "-m", "ormah_site.supervisor", json.dumps(spec)], env)


def _configure_logging(log_file: str | None, level: str) -> None:
    handlers: list[logging.Handler] = [logging.StreamHandler()]
    if log_file:
        try:
            handlers.append(SharedRotatingFileHandler(log_file, maxBytes=5 * 1024 * 1024, backupCount=3))
        except OSError:
            pass  # a read-only home: the console is enough (as in settings.LOGGING)
    for handler in handlers:
        handler.setFormatter(logging.Formatter(LOG_FORMAT))
    logging.basicConfig(level=logging.WARNING, handlers=handlers)
    logging.getLogger("ormah_site").setLevel(level)


def main(argv: Sequence[str]) -> int:
    """`python -m ormah_site.supervisor SPEC` (JSON from exec_supervisor): supervise until SIGINT or SIGTERM."""
    spec = json.loads(argv[0])
    _configure_logging(spec.get("log_file"), spec.get("log_level") or "INFO")
    parts = [Part(name, argv, nice) for name, argv, nice in spec["parts"]]
    Supervisor(parts, env=dict(os.environ), cwd=Path(spec["cwd"])).run()
    print("Ormah stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
