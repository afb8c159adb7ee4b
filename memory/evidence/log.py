"""The evidence files: `$ORMAH_HOME/evidence/YYYY-MM-DD.jsonl`, append-only, canonical. No Django.

An append takes an exclusive `flock` on each day file it writes, writes whole lines with O_APPEND and fsyncs (and
fsyncs the folder when a file is new), so an event that was acknowledged survives a crash. It is all or nothing:
every line is encoded before any file is opened, and when the disk refuses part of it (a short write, an error on a
later day's file) or anything else stops it, the files are cut back to their length before it, so the caller's
retry cannot write an event twice. A file that grew by more than the append wrote (a writer that takes no lock) is
left as it is and logged. A line torn by a crash (no final newline) is
never joined to the next event: the next append starts on a fresh line, and readers skip the torn bytes. Lines
that do not decode are reported and skipped, never rewritten.
"""

from __future__ import annotations

import errno
import fcntl
import logging
import os
import re
import secrets
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory.domain.evidence import EvidenceEvent, day_of, decode_event, encode_event
from memory.errors import StorageError, ValidationFailed

logger = logging.getLogger(__name__)

_DAY_FILE = re.compile(r"\d{4}-\d{2}-\d{2}\.jsonl")
HOST_ID_FILE = ".host-id"
_HOST_ID = re.compile(r"[0-9a-f]{12}")


@dataclass(frozen=True, slots=True)
class ReadEvent:
    """An event with where its line starts in its day file."""

    event: EvidenceEvent
    file_name: str
    offset: int


@dataclass(frozen=True, slots=True)
class BadLine:
    """A complete line that is not a well-formed event."""

    file_name: str
    offset: int
    reason: str


class EvidenceLog:
    """The evidence folder: one JSON Lines file per UTC day."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path_for_day(self, day: str) -> Path:
        return self.root / f"{day}.jsonl"

    def day_files(self) -> list[Path]:
        """Every day file, oldest first."""
        if not self.root.is_dir():
            return []
        return sorted(p for p in self.root.iterdir() if _DAY_FILE.fullmatch(p.name) and p.is_file())

    def host_id(self) -> str:
        """This home's evidence host id (12 hex digits), made once in `.host-id` beside the day files and kept.

        It qualifies the day files' names in a database several hosts share (memory/evidence/index.py). Raises
        StorageError when the file cannot be made or holds something else.
        """
        path = self.root / HOST_ID_FILE
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                value = path.read_text(encoding="ascii").strip()
            else:
                value = secrets.token_hex(6)
                with os.fdopen(fd, "w", encoding="ascii") as f:
                    f.write(value + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                _fsync_dir(self.root)
        except (OSError, UnicodeDecodeError) as exc:
            raise StorageError(f"cannot read or make the evidence host id {path}: {exc}") from exc
        if not _HOST_ID.fullmatch(value):
            raise StorageError(f"{path} does not hold a host id (12 hex digits): {value[:40]!r}")
        return value

    # -- writing ---------------------------------------------------------------------------------------------

    def append(self, events: Sequence[EvidenceEvent]) -> None:
        """Append events to their day files (by id), durably and all or nothing: when the disk refuses any part,
        every day file is cut back to the length it had, so a retry never writes an event twice.

        Raises ValidationFailed (text that is not valid UTF-8; nothing is written) or StorageError.
        """
        by_day: dict[str, list[EvidenceEvent]] = {}
        for event in events:
            by_day.setdefault(event.day, []).append(event)
        payloads = {day: _encode(by_day[day]) for day in sorted(by_day)}  # one order of taking the files' locks
        if not payloads:
            return
        opened: list[_DayFile] = []
        path = self.root
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            for day, payload in payloads.items():
                path = self.path_for_day(day)
                opened.append(_DayFile.open(path))
                opened[-1].write(payload)
            if any(f.created for f in opened):
                _fsync_dir(self.root)
        except OSError as exc:
            _cut_back(opened)
            raise StorageError(f"Cannot append evidence to {path}: {exc.strerror or exc}") from exc
        except BaseException:
            # Trigger: anything else stops the writes (a bug, KeyboardInterrupt). Why: an append is all or nothing.
            # Outcome: the files are cut back and the error is raised as it is.
            _cut_back(opened)
            raise
        finally:
            for f in opened:
                os.close(f.fd)

    # -- reading ---------------------------------------------------------------------------------------------

    def read_from(self, path: Path, offset: int = 0) -> tuple[list[ReadEvent], list[BadLine], int]:
        """Events in the complete lines from byte `offset`, the bad lines, and the offset after the last line."""
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                data = handle.read()
        except FileNotFoundError:
            return [], [], offset
        end = data.rfind(b"\n") + 1
        events, bad, position = [], [], offset
        for raw in data[:end].split(b"\n")[:-1]:
            start, position = position, position + len(raw) + 1
            if not raw.strip():
                continue
            try:
                events.append(ReadEvent(decode_event(raw.decode("utf-8")), path.name, start))
            except (ValueError, TypeError, UnicodeDecodeError) as exc:
                bad.append(BadLine(path.name, start, str(exc)[:200]))
        return events, bad, offset + end

    def iter_events(self) -> Iterator[ReadEvent]:
        """Every well-formed event, file by file, in file order."""
        for path in self.day_files():
            events, bad, _ = self.read_from(path)
            for line in bad:
                logger.warning("Skipping malformed evidence line %s@%s: %s", line.file_name, line.offset, line.reason)
            yield from events

    def find(self, event_id: str) -> EvidenceEvent | None:
        """The event with this id, looked up in the day file its id names (None when absent)."""
        day = day_of(event_id)
        if day is None:
            return None
        events, _, _ = self.read_from(self.path_for_day(day))
        return next((r.event for r in events if r.event.id == event_id), None)


def _encode(events: Sequence[EvidenceEvent]) -> bytes:
    """The day file's new lines; raises ValidationFailed for text UTF-8 cannot hold (a lone surrogate)."""
    lines = []
    for event in events:
        try:
            lines.append(encode_event(event).encode("utf-8"))
        except UnicodeEncodeError:
            raise ValidationFailed(f"Evidence event {event.id} holds text that is not valid UTF-8") from None
    return b"\n".join(lines) + b"\n"


@dataclass(slots=True)
class _DayFile:
    """A day file opened for one append, locked, with the length it had before it and the bytes it wrote."""

    path: Path
    fd: int
    size: int
    created: bool
    written: int = 0

    @classmethod
    def open(cls, path: Path) -> _DayFile:
        created = not path.exists()
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
        except OSError:
            os.close(fd)
            raise
        return cls(path=path, fd=fd, size=size, created=created)

    def write(self, payload: bytes) -> None:
        """Write every byte (a short write is continued, so its error is raised), then fsync."""
        if self.size and _last_byte(self.path) != b"\n":
            payload = b"\n" + payload  # a torn line stays alone; readers skip it
        view = memoryview(payload)
        while view:
            written = os.write(self.fd, view)
            if written <= 0:
                raise OSError(errno.EIO, "the disk took no bytes")
            self.written += written
            view = view[written:]
        os.fsync(self.fd)


def _cut_back(opened: Sequence[_DayFile]) -> None:
    """Undo a failed append: each day file back to its length before it (one it created stays, empty). A file that
    holds more than this append wrote was extended by a writer that takes no lock: it is left as it is."""
    for f in opened:
        try:
            now = os.fstat(f.fd).st_size
            if now == f.size:
                continue
            if now != f.size + f.written:
                logger.warning("Not cutting %s back to %d bytes after a failed append: it holds %d, not the %d this "
                               "append left (another writer appended)", f.path, f.size, now, f.size + f.written)
                continue
            os.ftruncate(f.fd, f.size)
            os.fsync(f.fd)
        except OSError:  # Trigger: the disk refuses the undo too. Why: the append's own error is the one to raise. Outcome: logged; the index flags an event appended twice by a retry as a duplicate.
            logger.exception("Could not cut %s back to %d bytes after a failed append", f.path, f.size)


def _last_byte(path: Path) -> bytes:
    with path.open("rb") as handle:
        handle.seek(-1, os.SEEK_END)
        return handle.read(1)


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
