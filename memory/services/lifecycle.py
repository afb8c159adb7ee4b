"""Lifecycle writes: confirmed use reinforces a memory (reference §7).

Only an explicit recall by id and positive feedback are confirmed use; search results, whisper injections and
activated neighbours never are, so a memory cannot reinforce itself by merely being found.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from memory.domain.lifecycle import reinforce
from memory.domain.node import Node, as_utc, utcnow
from memory.writes import write_unit

logger = logging.getLogger(__name__)


def node_confirm_use(*, ref: str, now: datetime | None = None, source: str = "recall_node") -> Node:
    """Record confirmed use: bump access, grow stability (bounded, once a day), promote archival to working.

    Writes the file through the write protocol; `updated` moves only when the tier changes.
    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed, WriteConflict.
    """
    now = as_utc(now or utcnow())
    with write_unit() as unit:
        node, stored = unit.read(ref)
        if stored.truncated:  # a huge hand-written file is served, never rewritten (docs/file-format.md)
            return node
        used = reinforce(node, now)
        if used.tier != node.tier:
            used = replace(used, updated=now)
            unit.audit(operation="promote", node=node, now=now,
                         detail={"from": str(node.tier), "to": str(used.tier), "reason": f"confirmed use ({source})"})
            logger.info("Confirmed use promoted %s from %s to %s", node.short_id, node.tier, used.tier)
        unit.save(used, expected=stored)
    logger.debug("Confirmed use of %s via %s: stability %s -> %s", node.short_id, source, node.stability,
                 used.stability)
    return used

