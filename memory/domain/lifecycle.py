"""Stability and retrievability (reference §7): R(t) = exp(-t/S), bounded reinforcement on confirmed use."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from memory.domain.enums import INITIAL_STABILITY, Tier
from memory.domain.node import Node


@dataclass(frozen=True, slots=True)
class LifecycleConf:
    initial_stability: float = INITIAL_STABILITY
    decay_threshold: float = 0.3
    max_stability: float = 365.0
    growth_factor: float = 0.5
    growth_exponent: float = 0.5
    spacing_cap: float = 2.0
    cooldown: timedelta = timedelta(days=1)


def days_between(earlier: datetime, later: datetime) -> float:
    """Elapsed days, never negative."""
    return max(0.0, (later - earlier).total_seconds() / 86400.0)


def retrievability(node: Node, now: datetime) -> float:
    """R = exp(-t/S), t in days since the last review (or last access)."""
    anchor = node.last_review or node.last_accessed
    return math.exp(-days_between(anchor, now) / max(node.stability, 1e-6))


def reinforce(node: Node, now: datetime, conf: LifecycleConf = LifecycleConf()) -> Node:
    """Confirmed use: bump access, and (outside the cooldown) grow stability boundedly; promote from archival."""
    stability, last_review = node.stability, node.last_review
    if last_review is None or now - last_review >= conf.cooldown:
        days = days_between(node.last_accessed or last_review or node.created, now)
        s = max(node.stability, 1e-6)
        spacing = min(math.exp(min(0.2 * days / s, 50.0)), conf.spacing_cap)
        stability = round(min(s * (1 + conf.growth_factor * s ** -conf.growth_exponent * spacing), conf.max_stability), 2)
        last_review = now
    tier = node.tier
    if tier == Tier.ARCHIVAL and "superseded_by" not in node.extra:
        tier = Tier.WORKING
        stability = max(stability, conf.initial_stability)
    return replace(node, stability=stability, last_review=last_review, last_accessed=now,
                   access_count=node.access_count + 1, tier=tier)
