"""The derived evidence index: day files -> EvidenceRow (+ evidence_fts by triggers) and the session-state projection.

Each day file is read from the byte offset indexed last time (kept in IndexMetaRow as `evidence:<file>`); a file
that shrank was rewritten by hand and is indexed again from the start. `full` wipes the rows and replays every
file in order, which yields the same rows as the live appends did (tests/trust/test_evidence.py).

On PostgreSQL several hosts share the rows and each appends to its own day files, so there a file's name in the
offsets' keys and in `EvidenceRow.file_name` is qualified by the home's host id (`<host>/<day>.jsonl`,
EvidenceLog.host_id), and the deletes of a shrunk file and of `full` touch only this host's rows
(tests/postgres/test_evidence_hosts.py). On SQLite (one home) names are the bare day-file names.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from django.db import connection, transaction

from memory.domain.evidence import EvidenceEvent, EvidenceKind, plain_data
from memory.domain.trust import SESSION_STATE_EVENT, SessionStatus
from memory.evidence.log import EvidenceLog, ReadEvent
from memory.index_insert import insert_rows
from memory.models import EvidenceRow, IndexMetaRow, SessionStateRow

META_PREFIX = "evidence:"
CHUNK = 500


@dataclass
class EvidenceSyncReport:
    indexed: int = 0
    files: int = 0
    malformed: list[tuple[str, int, str]] = field(default_factory=list)  # (file, offset, reason)
    duplicates: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"indexed": self.indexed, "files": self.files, "duplicates": self.duplicates,
                "malformed": [{"file": f, "offset": o, "reason": r} for f, o, r in self.malformed]}


def _row(read: ReadEvent) -> EvidenceRow:
    e = read.event
    return EvidenceRow(uid=e.id, kind=e.kind.value, at=e.at, session_id=e.session_id, scope_type=e.scope.type.value,
                       scope_id=e.scope.id, source=e.source, text=e.text, data=plain_data(e.data),
                       file_name=read.file_name, offset=read.offset)


def is_session_state(event: EvidenceEvent) -> bool:
    """True for the system events that set a session's state."""
    return event.kind == EvidenceKind.SYSTEM_EVENT and event.data.get("type") == SESSION_STATE_EVENT \
        and bool(event.session_id)


def _project_session_state(event: EvidenceEvent) -> None:
    """Upsert the session's state from a session_state event unless a later one is already projected."""
    current = SessionStateRow.objects.filter(session_id=event.session_id).first()
    if current is not None and current.updated > event.at:
        return
    data = event.data
    try:
        status = SessionStatus(data.get("status")).value
    except ValueError:
        return
    cited = [event.id] + [str(i) for i in data.get("source_event_ids") or [] if str(i) != event.id]
    SessionStateRow.objects.update_or_create(session_id=event.session_id, defaults={
        "status": status, "current_goal": str(data.get("current_goal") or ""),
        "summary": str(data.get("summary") or ""), "working_set": [str(w) for w in data.get("working_set") or []],
        "scope_type": event.scope.type.value, "scope_id": event.scope.id, "source_event_ids": cited,
        "event_id": event.id, "updated": event.at,
    })


def index_events(reads: Sequence[ReadEvent], report: EvidenceSyncReport | None = None) -> int:
    """Add rows for events just appended or read (ids already indexed are skipped); returns how many were added."""
    if not reads:
        return 0
    known = _known_uids([r.event.id for r in reads])
    fresh: list[ReadEvent] = []
    for read in reads:
        if read.event.id in known:
            if report is not None:
                report.duplicates.append(read.event.id)
            continue
        known.add(read.event.id)
        fresh.append(read)
    insert_rows(EvidenceRow, [_row(r) for r in fresh])  # bulk_create's rows (memory/index_insert.py)
    for read in fresh:
        if is_session_state(read.event):
            _project_session_state(read.event)
    return len(fresh)


def mark_indexed(file_name: str, offset: int) -> None:
    """Record that a day file is indexed up to `offset` bytes (one UPDATE once the day file has its record)."""
    key, value = META_PREFIX + file_name, str(offset)
    with connection.cursor() as cur:  # a plain statement: the ORM's update cost more than the write (every remember)
        cur.execute(f"UPDATE {IndexMetaRow._meta.db_table} SET value = %s WHERE key = %s", [value, key])
        updated = cur.rowcount
    if not updated:
        IndexMetaRow.objects.update_or_create(key=key, defaults={"value": value})


def _known_uids(uids: Sequence[str]) -> set[str]:
    """Which of `uids` have a row: one plain statement per CHUNK ids (every remember asks it of its one event; the
    ORM's query building cost more than the read). No ORDER BY: a set needs none."""
    known: set[str] = set()
    with connection.cursor() as cur:
        for at in range(0, len(uids), CHUNK):
            chunk = list(uids[at:at + CHUNK])
            cur.execute(f"SELECT uid FROM {EvidenceRow._meta.db_table} WHERE uid IN "
                        f"({', '.join(['%s'] * len(chunk))})", chunk)
            known.update(row[0] for row in cur.fetchall())
    return known


def _offsets_of(keys: Sequence[str]) -> dict[str, str]:
    """{key: value} of the offsets' rows among `keys`: one plain statement per CHUNK keys (every remember reads its
    day file's offset)."""
    found: dict[str, str] = {}
    with connection.cursor() as cur:
        for at in range(0, len(keys), CHUNK):
            chunk = list(keys[at:at + CHUNK])
            cur.execute(f"SELECT key, value FROM {IndexMetaRow._meta.db_table} WHERE key IN "
                        f"({', '.join(['%s'] * len(chunk))})", chunk)
            found.update(cur.fetchall())
    return found


def host_prefix(log: EvidenceLog) -> str:
    """What qualifies this home's day-file names in the index: "" on SQLite, "<host id>/" on PostgreSQL."""
    return f"{log.host_id()}/" if connection.vendor == "postgresql" else ""


def sync(log: EvidenceLog, *, full: bool = False, days: Sequence[str] | None = None) -> EvidenceSyncReport:
    """Index what the day files hold beyond the recorded offsets; `full` rebuilds every row from the files.

    `days` (YYYY-MM-DD) limits an incremental sync to those files, as after an append.
    """
    report = EvidenceSyncReport()
    paths = log.day_files() if days is None or full else [p for p in map(log.path_for_day, sorted(set(days)))
                                                             if p.is_file()]
    prefix = host_prefix(log)
    with transaction.atomic():
        if full and not prefix:
            EvidenceRow.objects.all().delete()
            SessionStateRow.objects.all().delete()
            IndexMetaRow.objects.filter(key__startswith=META_PREFIX).delete()
        elif full:  # a shared database: only this host's rows (and the states they set) are read again
            mine = EvidenceRow.objects.filter(file_name__startswith=prefix)
            SessionStateRow.objects.filter(event_id__in=mine.values("uid")).delete()
            mine.delete()
            IndexMetaRow.objects.filter(key__startswith=META_PREFIX + prefix).delete()
        if days is None or full:
            metas = IndexMetaRow.objects.filter(key__startswith=META_PREFIX + prefix).values_list("key", "value")
        else:  # the days just appended to (every remember): their keys, each of which starts with the prefix
            metas = _offsets_of([META_PREFIX + prefix + p.name for p in paths]).items()
        offsets = {k.removeprefix(META_PREFIX): int(v) for k, v in metas}
        for path in paths:
            name = prefix + path.name
            start = offsets.get(name, 0)
            if start > path.stat().st_size:  # rewritten by hand: index it again from the top
                EvidenceRow.objects.filter(file_name=name).delete()
                start = 0
            events, bad, end = log.read_from(path, start)
            report.files += 1
            report.malformed += [(b.file_name, b.offset, b.reason) for b in bad]
            report.indexed += index_events([replace(e, file_name=name) for e in events] if prefix else events,
                                           report)
            if end != offsets.get(name):
                mark_indexed(name, end)
    return report
