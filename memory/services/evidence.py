"""Writes to the evidence ledger: append events (file first, then the derived rows), rebuild the rows, and remember
with an explicit_memory event the new memory cites.

The write protocol of docs/architecture.md holds here too: the day file is appended and fsynced before any row is
written, and a failed row write is healed by the next `evidence_sync` (run by `ormah rebuild`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from memory.conf import MemoryConf, get_conf
from memory.domain.evidence import EvidenceEvent, EvidenceKind, new_event_id
from memory.domain.node import as_utc, utcnow
from memory.domain.requests import NodeCreate
from memory.domain.scopes import GLOBAL_SCOPE, Scope, ScopeType
from memory.domain.trust_requests import EvidenceIn
from memory.evidence import index as evidence_index
from memory.evidence.index import EvidenceSyncReport
from memory.evidence.log import EvidenceLog
from memory.group_commit import GroupCommit
from memory.writes import Prepared, WriteUnit, exclusive, write_unit
from memory.services.links import LinkAhead, links_ahead
from memory.services.nodes import CreateResult, create_in, nodes_embed_ahead, nodes_prepare

logger = logging.getLogger(__name__)


def evidence_log(conf: MemoryConf | None = None) -> EvidenceLog:
    """The evidence folder of the configured home."""
    return EvidenceLog((conf or get_conf()).evidence_dir)


def _scope_for(item: EvidenceIn) -> Scope:
    if item.scope is not None:
        return item.scope.to_scope()
    if item.session_id:
        return Scope(ScopeType.SESSION, item.session_id)
    return GLOBAL_SCOPE


def evidence_build(item: EvidenceIn, *, now: datetime) -> EvidenceEvent:
    """The event a request describes, with a fresh id for the day of `now` (no I/O)."""
    return EvidenceEvent(id=new_event_id(now), kind=item.kind, at=now, text=item.text, session_id=item.session_id,
                         scope=_scope_for(item), source=item.source, data=dict(item.data))


def evidence_append(*, events: Sequence[EvidenceEvent]) -> list[EvidenceEvent]:
    """Append built events durably to their day files, then index them. Raises StorageError."""
    if not events:
        return []
    conf = get_conf()
    log = evidence_log(conf)
    with exclusive(conf):
        log.append(events)
        evidence_index.sync(log, days=[e.day for e in events])
    return list(events)


def evidence_record(*, items: Sequence[EvidenceIn], now: datetime | None = None) -> list[EvidenceEvent]:
    """Append events from requests (ids are assigned here); returns them in order. Raises StorageError."""
    now = as_utc(now or utcnow())
    return evidence_append(events=[evidence_build(item, now=now) for item in items])


def evidence_sync(*, full: bool = False) -> EvidenceSyncReport:
    """Index what the day files hold and the rows do not; `full` rebuilds the evidence rows from the files."""
    conf = get_conf()
    with exclusive(conf):
        report = evidence_index.sync(evidence_log(conf), full=full)
    for file_name, offset, reason in report.malformed:
        logger.warning("Skipping malformed evidence line %s@%s: %s", file_name, offset, reason)
    return report


def _explicit_event(request: NodeCreate, session_id: str | None, now: datetime) -> EvidenceEvent:
    session_id = (session_id or "").strip() or None  # spaces name no session, as evidence's SessionId reads them
    scope = Scope(ScopeType.SESSION, session_id) if session_id else (
        Scope(ScopeType.PROJECT, request.space) if request.space else GLOBAL_SCOPE)
    return EvidenceEvent(
        id=new_event_id(now), kind=EvidenceKind.EXPLICIT_MEMORY, at=now, text=request.content,
        session_id=session_id, scope=scope, source=request.source,
        data={k: v for k, v in (("title", request.title), ("type", request.type.value), ("space", request.space))
              if v is not None},
    )


@dataclass
class _RememberCall:
    """One caller's remember, as handed to the group commit."""

    events: list[EvidenceEvent]
    requests: list[NodeCreate]
    now: datetime
    auto_link: bool
    ahead: LinkAhead | None = None  # the auto-links' search run before the lock (re-checked under it)
    appended: bool = False  # its events are in the day files (a retry alone must not append them twice)
    ids: list[str] | None = None  # the memories' ids, minted before the lock (nodes_prepare)
    prepared: Prepared | None = None  # their files, written and fsynced nameless before the lock


def nodes_remember(*, items: Sequence[tuple[NodeCreate, str | None]], now: datetime | None = None,
                   auto_link: bool = True) -> list[CreateResult]:
    """Remember explicitly: append one explicit_memory event per (request, session_id), then create the memories,
    each citing its event (memory.services.nodes.nodes_create). The texts are embedded before the write lock; the
    events' durable append and the memories then share one hold of it (one wait in the writers' queue, not two)
    and one index transaction (the evidence rows with the memories' rows), and concurrent callers in this process share that hold too (memory.group_commit: one hold, one evidence
    fsync, one folder fsync and one transaction for every remember queued meanwhile). The memories' files are
    written and fsynced before the lock too, nameless (memory.services.nodes.nodes_prepare): under it each only gets
    its name when the memory computed there is the one forecast. A call returns once its own memories are committed.

    The events are the evidence that the memories were asked for, so they are written first; a memory that then
    fails validation leaves its event behind (the ledger records what was said, not only what was kept).
    """
    now = as_utc(now or utcnow())
    events = [_explicit_event(request, session, now) for request, session in items]
    requests = [request.model_copy(update={"source_event_ids": [event.id, *request.source_event_ids]})
                for (request, _), event in zip(items, events)]
    nodes_embed_ahead(requests=requests, now=now)
    ahead = links_ahead(requests=requests, now=now) if auto_link else None
    ids, prepared = nodes_prepare(requests=requests, nows=[now] * len(requests), auto_link=auto_link, ahead=ahead)
    try:
        return _REMEMBER.submit(_RememberCall(events=events, requests=requests, now=now, auto_link=auto_link,
                                              ahead=ahead, ids=ids, prepared=prepared))
    finally:
        if prepared is not None:
            prepared.close()


def _remember_alone(call: _RememberCall) -> list[CreateResult]:
    with write_unit() as unit:
        _append_events(unit, [call])
        return create_in(unit, requests=call.requests, nows=[call.now] * len(call.requests), auto_link=call.auto_link,
                         ahead=call.ahead, ids=call.ids, prepared=call.prepared)


def _append_events(unit: WriteUnit, calls: Sequence[_RememberCall]) -> None:
    """Append the events of the calls not appended yet (all or nothing, memory.evidence.log) and mark them as soon
    as they are durable; their rows (the calls' days indexed) are written in the unit's index transaction, with the
    memories: one commit a remember. A call retried alone after a later failure (its group's index transaction,
    the evidence rows) indexes its events but never appends them a second time; a process killed before that
    commit leaves events the day files hold and the rows do not, which the next sync of their day (the next
    remember's, or `ormah rebuild`'s) indexes. Raises StorageError."""
    pending = [c for c in calls if not c.appended]
    events = [e for c in pending for e in c.events]
    days = sorted({e.day for c in calls for e in c.events})
    if not days:
        return
    log = evidence_log(unit.conf)
    if events:  # the unit holds the write lock
        log.append(events)
        for c in pending:
            c.appended = True
    unit.on_commit(lambda: evidence_index.sync(log, days=days))
    # a unit that fails (a memory's validation, its index transaction) still indexes the events it appended: the
    # ledger records what was said, not only what was kept
    unit.on_rollback(lambda: evidence_index.sync(log, days=days))


def _remember_group(calls: Sequence[_RememberCall]) -> list[list[CreateResult] | BaseException]:
    """Write a group of callers' remembers in one unit (evidence first, then every memory, as one batch); if that
    unit fails (one caller's unknown connection target, a full disk), it keeps nothing and each call is written
    alone, so one caller's error is never another's."""
    if len(calls) > 1 and len({c.auto_link for c in calls}) == 1:
        try:
            with write_unit() as unit:
                _append_events(unit, calls)
                flat = create_in(unit, requests=[r for c in calls for r in c.requests], auto_link=calls[0].auto_link,
                                 nows=[c.now for c in calls for _ in c.requests], ahead=_joined(calls),
                                 ids=_joined_ids(calls), prepared=_joined_prepared(calls))
            out: list[list[CreateResult] | BaseException] = []
            for c in calls:
                out.append(flat[:len(c.requests)])
                flat = flat[len(c.requests):]
            return out
        except Exception as exc:  # Trigger: the shared unit failed (rolled back whole). Why: the error may be one caller's. Outcome: each call runs alone below.
            logger.info("A group of %d remembers failed together (%s); writing each alone", len(calls),
                        type(exc).__name__)
    outcomes: list[list[CreateResult] | BaseException] = []
    for call in calls:
        try:
            outcomes.append(_remember_alone(call))
        except Exception as exc:  # Trigger: this call's write failed. Why: it is this caller's error only. Outcome: raised in its caller.
            outcomes.append(exc)
    return outcomes


def _joined(calls: Sequence[_RememberCall]) -> LinkAhead | None:
    """The calls' searches ahead as one for their requests in order (from the oldest generation: what changed since
    any of them is re-checked for all); None when a call has none."""
    aheads = [c.ahead for c in calls]
    if any(a is None for a in aheads):
        return None
    return LinkAhead(gen=min(a.gen for a in aheads), limit=min(a.limit for a in aheads),
                     found=[hits for a in aheads for hits in a.found])


def _joined_ids(calls: Sequence[_RememberCall]) -> list[str] | None:
    """The calls' ids minted before the lock, in order; None when a call has none (create_in mints them all)."""
    if any(c.ids is None for c in calls):
        return None
    return [i for c in calls for i in c.ids or ()]


def _joined_prepared(calls: Sequence[_RememberCall]) -> Prepared | None:
    """The calls' files written before the lock as one (by memory id); the calls keep them and close them."""
    return Prepared({k: v for c in calls if c.prepared is not None for k, v in c.prepared.files.items()})


_REMEMBER: GroupCommit[_RememberCall, list[CreateResult]] = GroupCommit(_remember_group)


def node_remember(*, request: NodeCreate, session_id: str | None = None, now: datetime | None = None,
                  auto_link: bool = True) -> CreateResult:
    """Remember one memory explicitly (see nodes_remember)."""
    return nodes_remember(items=[(request, session_id)], now=now, auto_link=auto_link)[0]
