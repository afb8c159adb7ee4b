"""Lifecycle writes: confirmed use reinforces a memory (reference §7).

Only an explicit recall by id and positive feedback are confirmed use; search results, whisper injections and
activated neighbours never are, so a memory cannot reinforce itself by merely being found.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime

from memory import runtime
from memory.conf import get_conf
from memory.domain.lifecycle import reinforce
from memory.domain.node import Node, as_utc, utcnow
from memory.selectors import node_read, node_row_get
from memory.services.audit import audit_record
from memory.services.locking import write_lock
from memory.services.nodes import _persist

logger = logging.getLogger(__name__)


def node_confirm_use(*, ref: str, now: datetime | None = None, source: str = "recall_node") -> Node:
    """Record confirmed use: bump access, grow stability (bounded, once a day), promote archival to working.

    Writes the file through the write protocol; `updated` moves only when the tier changes.
    Raises NodeNotFound, AmbiguousNodeRef, ValidationFailed, WriteConflict.
    """
    conf = get_conf()
    store = runtime.store(conf)
    now = as_utc(now or utcnow())
    with write_lock(conf.lock_file):
        node, stored = node_read(store=store, row=node_row_get(ref=ref))
        used = reinforce(node, now)
        if used.tier != node.tier:
            used = replace(used, updated=now)
            audit_record(operation="promote", node=node, now=now,
                         detail={"from": str(node.tier), "to": str(used.tier), "reason": f"confirmed use ({source})"})
            logger.info("Confirmed use promoted %s from %s to %s", node.short_id, node.tier, used.tier)
        _persist(store, used, expected=stored)
    logger.debug("Confirmed use of %s via %s: stability %s -> %s", node.short_id, source, node.stability,
                 used.stability)
    return used

