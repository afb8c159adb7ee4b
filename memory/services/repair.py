"""Repairs made through the write door: what a killed write left half done (run by every index sync, so by the
watcher, startup, `ormah rebuild` and `ormah doctor --heal`), and pruning connections to memories that are gone."""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from datetime import datetime

from memory.domain.node import utcnow, without_connection
from memory.domain.wording import counted
from memory.errors import MalformedNodeFile, NodeNotFound, WriteConflict
from memory.models import NodeRow
from memory.selectors import dangling_connections
from memory.services.merge_undo import merges_settle_pending
from memory.writes import WriteUnit, write_unit

logger = logging.getLogger(__name__)


def interrupted_writes_recover(*, unit: WriteUnit) -> dict:
    """Recover what a SIGKILLed write left half done, before a sync scans the files; returns what it did.

    Files renamed aside by a killed soft delete or guarded write are put back (or discarded when their node is in
    its live file or tombstone, or kept in conflicts/), temp files a killed write left over an hour ago are
    removed, then merges left pending are settled from the files.
    Needs the write lock (the caller's unit): then nothing in flight has a file aside or a merge pending.
    """
    set_aside = unit.put_back_set_aside()
    for item in set_aside:
        logger.warning("A file set aside by an interrupted write was %s: %s%s", item.outcome, item.path.name,
                       f" -> {item.dest.name}" if item.dest else "")
    stale = unit.remove_stale_temps(now=time.time())
    if stale:
        logger.warning("Removed %s left by interrupted writes (over an hour old): %s",
                       counted(len(stale), "temp file"), ", ".join(p.name for p in stale[:20]))
    return {"set_aside": [item.outcome for item in set_aside], "stale_temps": len(stale),
            "merges": merges_settle_pending(unit=unit)}


def connections_prune_dangling(*, now: datetime | None = None) -> list[dict]:
    """Remove connections whose target is no live memory from their source files; returns what was removed.

    A file edited on disk meanwhile is left for the next run (its write would conflict). `updated` does not move:
    this is bookkeeping, not an edit of the memory.
    """
    now = now or utcnow()
    removed: list[dict] = []
    with write_unit() as unit:
        by_source: dict[str, set[str]] = defaultdict(set)
        for d in dangling_connections():
            by_source[d["source"]].add(d["target"])
        live = set(NodeRow.objects.filter(uid__in=[t for ts in by_source.values() for t in ts])
                   .values_list("uid", flat=True))
        for source, targets in sorted(by_source.items()):
            try:
                node, stored = unit.read(source)
            except (NodeNotFound, MalformedNodeFile):  # a file gone or malformed: left as it is (doctor reports it)
                continue
            new = node
            for target in sorted(targets - live):
                new = without_connection(new, target)
            if new is node:
                continue
            gone = [{"source": source, "target": c.target, "edge": str(c.edge)}
                    for c in node.connections if c not in new.connections]
            try:
                unit.save(new, expected=stored)
            except WriteConflict:
                logger.warning("Not pruning connections of %s: its file changed on disk", node.short_id)
                continue
            unit.audit(operation="prune_connections", node=node, now=now, detail={"removed": gone})
            removed += gone
    return removed
