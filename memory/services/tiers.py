"""The core tier's cap: demote the least important core memories to working when core holds more than the cap."""

from __future__ import annotations

import logging
from collections.abc import Set as AbstractSet
from dataclasses import replace
from datetime import datetime

from memory.domain.enums import Tier
from memory.domain.node import utcnow
from memory.models import NodeRow
from memory.writes import write_unit

logger = logging.getLogger(__name__)


def core_cap_enforce(*, now: datetime | None = None, keep: AbstractSet[str] = frozenset()) -> list[str]:
    """Demote the least important core memories to working until core holds at most the cap.

    Never the self node, a pinned block or a read-only block: the cap is automatic, and those are standing rules a
    person put there (docs/trust.md), so core may hold more than the cap when they alone exceed it.
    `keep`: ids this call leaves in core. Remember and imports pass the core memories they just wrote, a
    promotion (node_set_tier, node_update) the memory it promoted: a new or promoted memory often holds less
    importance than an older core memory (a new one the formula's value with no access yet, 0.33-0.48), and a
    person's or an agent's explicit tier=core is not undone by the call that wrote it. When only they are left to
    demote, core stays over the cap until the next importance_scorer run keeps it.
    """
    now = now or utcnow()
    demoted = []
    with write_unit() as unit:
        conf = unit.conf
        core = NodeRow.objects.filter(tier=Tier.CORE, is_self=False)
        excess = core.count() - conf.core_cap
        if excess <= 0:
            return []
        movable = core.filter(pinned=False, read_only=False).exclude(uid__in=keep)
        for row in movable.order_by("importance", "last_accessed", "created")[:excess]:
            node, stored = unit.read_row(row)
            unit.save(replace(node, tier=Tier.WORKING, updated=now), expected=stored)
            unit.audit(operation="demote", node=node, now=now, detail={"reason": "core cap"})
            demoted.append(node.id)
    logger.info("Core cap %s: demoted %s memories to working", conf.core_cap, len(demoted))
    return demoted
