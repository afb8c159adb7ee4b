"""Claim: the processes of `ormah serve` share one size-rotated log (ormah_site/logfiles.py): several processes
writing and rotating a small file at once lose no line while the backups can hold them all, keep every line whole,
and never leave more backups than configured."""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from pathlib import Path

from ormah_site.logfiles import SharedRotatingFileHandler
from tests.faults.support import ROOT

WRITERS, LINES = 4, 150
LINE = "x" * 60  # ~100 bytes a record with its prefix

# One writer: its own handler (as each process of the served tree has), started with the others at a go file.
WRITER = """
import logging, os, sys, time
from ormah_site.logfiles import SharedRotatingFileHandler
log, go, writer, lines, max_bytes, backups = sys.argv[1:7]
handler = SharedRotatingFileHandler(log, maxBytes=int(max_bytes), backupCount=int(backups))
handler.setFormatter(logging.Formatter("%(message)s"))
logger = logging.getLogger("w")
logger.addHandler(handler)
logger.propagate = False
logger.setLevel(logging.INFO)
while not os.path.exists(go):
    time.sleep(0.001)
for i in range(int(lines)):
    logger.info("w%s-%04d %s", writer, i, "x" * 60)
handler.close()
"""


def run_writers(log: Path, *, max_bytes: int, backups: int) -> None:
    go = log.parent / "go"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(log), str(go), str(w), str(LINES), str(max_bytes),
                               str(backups)], cwd=ROOT) for w in range(WRITERS)]
    time.sleep(0.2)  # not a timing assertion: the writers start together if they are ready, correct either way
    go.touch()
    for proc in procs:
        assert proc.wait(timeout=120) == 0


def files_of(log: Path) -> list[Path]:
    return sorted(p for p in log.parent.iterdir() if p.name.startswith(log.name) and not p.name.endswith(".lock"))


def test_several_processes_rotating_one_file_lose_no_line_the_backups_can_hold(tmp_path):
    log = tmp_path / "ormah.log"
    # 4 x 150 lines of ~73 bytes: ~44 KB in files of at most 12 KB, 3 backups + the log hold >= 4 x (12 KB - a line).
    run_writers(log, max_bytes=12_000, backups=3)
    files = files_of(log)
    assert [p.name for p in files] == ["ormah.log", "ormah.log.1", "ormah.log.2", "ormah.log.3"]
    lines = [line for p in files for line in p.read_text().splitlines()]
    expected = {f"w{w}-{i:04d} {LINE}" for w in range(WRITERS) for i in range(LINES)}
    assert sorted(lines) == sorted(expected)  # every line once, none cut or merged with another
    assert all(p.stat().st_size <= 12_000 for p in files)


def test_more_lines_than_the_backups_hold_keep_the_newest_and_never_an_extra_backup(tmp_path):
    log = tmp_path / "ormah.log"
    run_writers(log, max_bytes=2_000, backups=2)
    files = files_of(log)
    assert [p.name for p in files] == ["ormah.log", "ormah.log.1", "ormah.log.2"]
    lines = [line for p in files for line in p.read_text().splitlines()]
    expected = {f"w{w}-{i:04d} {LINE}" for w in range(WRITERS) for i in range(LINES)}
    assert lines and set(lines) <= expected and len(lines) == len(set(lines))
    # Within each file a writer's lines keep their order, and the files go from oldest (.2) to newest (the log).
    for w in range(WRITERS):
        own = [line for p in reversed(files) for line in p.read_text().splitlines() if line.startswith(f"w{w}-")]
        assert own == sorted(own)


def test_a_handler_follows_a_file_another_process_rotated(tmp_path):
    log = tmp_path / "ormah.log"
    handler = SharedRotatingFileHandler(str(log), maxBytes=10_000, backupCount=3)
    handler.setFormatter(logging.Formatter("%(message)s"))
    record = logging.LogRecord("t", logging.INFO, __file__, 1, "before", None, None)
    handler.emit(record)
    log.rename(tmp_path / "ormah.log.1")  # what another process's rotation does
    record.msg = "after"
    handler.emit(record)
    handler.close()
    assert (log.read_text(), (tmp_path / "ormah.log.1").read_text()) == ("after\n", "before\n")
