"""Lifecycle writes: confirmed use reinforces a memory (reference §7).

Only an explicit recall by id and positive feedback are confirmed use; search results, whisper injections and
activated neighbours never are, so a memory cannot reinforce itself by merely being found.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory.domain.lifecycle import reinforce
from memory.domain.node import Node, as_utc, utcnow
from memory.group_commit import GroupCommit
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger(__name__)


def node_confirm_use(*, ref: str, now: datetime | None = None, source: str = "recall_node") -> Node:
    """Record confirmed use: bump access, grow stability (bounded, once a day), promote archival to working.

    Writes the file through the write protocol; `updated` moves only when the tier changes, and only the row's
    counters are written in the index when it does not (no FTS, tag, edge or vector work). Concurrent callers in
    this process share one hold of the write lock (memory.group_commit); each returns once its write is committed.
    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed, WriteConflict.
    """
    return _CONFIRM.submit((ref, as_utc(now or utcnow()), source))


def _confirm_group(uses: Sequence[tuple[str, datetime, str]]) -> list[Node | BaseException]:
    """Confirmed uses queued meanwhile, in one unit: every file is written, then one folder fsync and one index
    transaction (with the promote audit rows) at its end. If any use fails, the unit keeps nothing (no file, no
    row, no audit row; nothing was flushed, so no index re-sync either) and each use is written alone, so one
    caller's error (a memory forgotten meanwhile) is never another's."""
    if len(uses) > 1:
        try:
            with write_unit() as unit:
                return [_confirm_in(unit, ref=ref, now=now, source=source) for ref, now, source in uses]
        except Exception as exc:  # Trigger: the shared unit failed (rolled back whole). Why: the error may be one caller's. Outcome: each is written alone below.
            logger.info("A group of %d confirmed uses failed together (%s); writing each alone", len(uses),
                        type(exc).__name__)
    outcomes: list[Node | BaseException] = []
    for ref, now, source in uses:
        try:
            with write_unit() as unit:
                used = _confirm_in(unit, ref=ref, now=now, source=source)
        except Exception as exc:  # Trigger: this use's write failed. Why: it is this caller's error only. Outcome: raised in its caller.
            outcomes.append(exc)
        else:
            outcomes.append(used)
    return outcomes


def _confirm_in(unit: WriteUnit, *, ref: str, now: datetime, source: str) -> Node:
    """One confirmed use written into `unit` (not flushed: the unit's end indexes it with the rest)."""
    node, stored = unit.read(ref)
    if stored.truncated:  # a huge hand-written file is served, never rewritten (docs/file-format.md)
        return node
    used = reinforce(node, now)
    if used.tier != node.tier:
        used = replace(used, updated=now)
        unit.audit(operation="promote", node=node, now=now,
                   detail={"from": str(node.tier), "to": str(used.tier), "reason": f"confirmed use ({source})"})
        logger.info("Confirmed use promoted %s from %s to %s", node.short_id, node.tier, used.tier)
    # Access, stability and review are the row's own columns: the index updates just them (WriteUnit.save's
    # `before`), unless the tier moved or the row was not indexed from this file, which derive everything again.
    unit.save(used, expected=stored, before=node)
    logger.debug("Confirmed use of %s via %s: stability %s -> %s", node.short_id, source, node.stability,
                 used.stability)
    return used


_CONFIRM: GroupCommit[tuple[str, datetime, str], Node] = GroupCommit(_confirm_group)
