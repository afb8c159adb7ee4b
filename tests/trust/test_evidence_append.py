"""memory.evidence.log: an append is all or nothing, so a caller that retries after an error never writes an event
twice, and a write the disk cuts short is an error, never a silently torn event."""

from __future__ import annotations

import logging
import os
import select
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path

import pytest

from memory.domain.evidence import EvidenceEvent, EvidenceKind, decode_event, encode_event, new_event_id
from memory.errors import StorageError, ValidationFailed
from memory.evidence.log import EvidenceLog
from tests.trust.conftest import NOW

ROOT = Path(__file__).resolve().parents[2]

# A child appends under a file-size limit that ends inside its line: the kernel writes up to the limit (a short
# write) and refuses the rest with EFBIG (SIGXFSZ ignored, as tests/faults/mounts.py does for a full disk).
SHORT_WRITE = """
import resource, signal, sys
from datetime import datetime
from pathlib import Path
from memory.domain.evidence import EvidenceEvent, EvidenceKind, new_event_id
from memory.errors import StorageError, ValidationFailed
from memory.evidence.log import EvidenceLog

root, now = Path(sys.argv[1]), datetime.fromisoformat(sys.argv[2])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
size = (root / f"{now:%Y-%m-%d}.jsonl").stat().st_size
resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    EvidenceLog(root).append([EvidenceEvent(id=new_event_id(now), kind=EvidenceKind.USER_MESSAGE, at=now,
                                            text="a long message " * 100)])
except StorageError:
    print("StorageError")
else:
    print("appended")
"""


def _event(text: str, at=NOW) -> EvidenceEvent:
    return EvidenceEvent(id=new_event_id(at), kind=EvidenceKind.USER_MESSAGE, at=at, text=text)


def test_an_append_refused_on_a_later_day_leaves_the_earlier_day_file_as_it_was(tmp_path):
    log = EvidenceLog(tmp_path)
    first = _event("We deploy with make deploy")
    log.append([first])
    before = log.path_for_day("2026-07-01").read_bytes()
    log.path_for_day("2026-07-02").mkdir()  # the next day's file cannot be written
    with pytest.raises(StorageError, match="2026-07-02.jsonl"):
        log.append([_event("late at night"), _event("just after midnight", NOW + timedelta(days=1))])
    assert log.path_for_day("2026-07-01").read_bytes() == before
    log.path_for_day("2026-07-02").rmdir()
    retried = [_event("late at night"), _event("just after midnight", NOW + timedelta(days=1))]
    log.append(retried)
    assert [r.event for r in log.iter_events()] == [first, *retried]


def test_a_write_the_disk_cuts_short_raises_and_leaves_the_day_file_as_it_was(tmp_path):
    log = EvidenceLog(tmp_path)
    log.append([_event("We deploy with make deploy")])
    before = log.path_for_day("2026-07-01").read_bytes()
    child = subprocess.run([sys.executable, "-c", SHORT_WRITE, str(tmp_path), NOW.isoformat()], cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
    assert (child.returncode, child.stdout.strip()) == (0, "StorageError"), child.stderr
    assert log.path_for_day("2026-07-01").read_bytes() == before
    assert [decode_event(line).text for line in before.decode().splitlines()] == ["We deploy with make deploy"]


def test_an_event_that_cannot_be_encoded_writes_nothing_on_any_day(tmp_path):
    log = EvidenceLog(tmp_path)
    log.append([_event("We deploy with make deploy"), _event("a day later", NOW + timedelta(days=1))])
    before = [log.path_for_day(day).read_bytes() for day in ("2026-07-01", "2026-07-02")]
    with pytest.raises(ValidationFailed, match="not valid UTF-8"):
        log.append([_event("late at night"), _event("a lone surrogate \ud800", NOW + timedelta(days=1))])
    assert [log.path_for_day(day).read_bytes() for day in ("2026-07-01", "2026-07-02")] == before


def test_a_day_file_another_writer_extended_during_a_failed_append_is_not_cut(tmp_path, caplog):
    """The next day's file is a FIFO: the append writes day 1, then blocks writing more than a pipe holds into the
    FIFO. Meanwhile a writer that takes no lock appends a line to day 1; closing the FIFO's reader fails the append.
    Cutting day 1 back would lose that line, so it is left as it is."""
    log = EvidenceLog(tmp_path)
    log.append([_event("We deploy with make deploy")])
    day1 = log.path_for_day("2026-07-01")
    os.mkfifo(log.path_for_day("2026-07-02"))
    reader = os.open(log.path_for_day("2026-07-02"), os.O_RDONLY | os.O_NONBLOCK)
    outcome: list[BaseException] = []

    def append() -> None:
        try:
            log.append([_event("late at night"), _event("x" * (4 << 20), NOW + timedelta(days=1))])
        except BaseException as exc:  # the test asserts on it
            outcome.append(exc)

    appender = threading.Thread(target=append)
    with caplog.at_level(logging.WARNING, logger="memory.evidence.log"):
        try:
            appender.start()
            poller = select.poll()
            poller.register(reader, select.POLLIN)
            ready = poller.poll(120_000)  # day 1 is written once the FIFO has bytes to read
            assert ready and ready[0][1] & select.POLLIN
            with day1.open("ab") as hand:
                hand.write((encode_event(_event("appended by hand")) + "\n").encode())
        finally:
            os.close(reader)  # the append's next write into the FIFO fails (EPIPE)
            appender.join(timeout=120)
    assert not appender.is_alive()
    assert len(outcome) == 1 and isinstance(outcome[0], StorageError), outcome
    texts = [decode_event(line).text for line in day1.read_text().splitlines()]
    assert texts == ["We deploy with make deploy", "late at night", "appended by hand"]
    assert "Not cutting" in caplog.text
