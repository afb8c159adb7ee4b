"""memory.evidence.log: an append is all or nothing, so a caller that retries after an error never writes an event
twice, and a write the disk cuts short is an error, never a silently torn event."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest

from memory.domain.evidence import EvidenceEvent, EvidenceKind, decode_event, new_event_id
from memory.errors import StorageError
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
from memory.errors import StorageError
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
