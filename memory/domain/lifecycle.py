"""Stability and retrievability (reference §7): R(t) = exp(-t/S), bounded reinforcement on confirmed use; the
importance formula (reference §6.7), which remember writes at creation and importance_scorer keeps current."""

from __future__ import annotations

import math
from collections.abc import Sequence, Set as AbstractSet
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


@dataclass(frozen=True, slots=True)
class ImportanceWeights:
    access: float = 0.34
    edges: float = 0.33
    recency: float = 0.33
    access_reference: int = 50
    edge_reference: int = 20
    recency_half_life_days: float = 14.0
    min_change: float = 0.01


def importance(*, access_count: int, degree: int, last_accessed: datetime, now: datetime,
               w: ImportanceWeights = ImportanceWeights()) -> float:
    """0.34·access + 0.33·edges + 0.33·recency over the weights' sum, each signal log-normalised or decayed to [0, 1];
    `degree`: edges in plus edges out. Rounded to 4 places, as the files hold it."""
    access = min(1.0, math.log1p(access_count) / math.log1p(w.access_reference))
    edges = min(1.0, math.log1p(degree) / math.log1p(w.edge_reference))
    recency = math.exp(-math.log(2) * days_between(last_accessed, now) / w.recency_half_life_days)
    total = w.access + w.edges + w.recency
    return round(min(1.0, max(0.0, (w.access * access + w.edges * edges + w.recency * recency) / total)), 4)


def with_creation_importance(node: Node, degree: int) -> Node:
    """A new memory with the importance the formula gives it when it is written (its accesses and last access as
    built, `degree` its edges once indexed), so the next importance_scorer run finds nothing to change."""
    return replace(node, importance=importance(access_count=node.access_count, degree=degree,
                                               last_accessed=node.last_accessed, now=node.last_accessed))


def creation_degrees(nodes: Sequence[Node], defined: AbstractSet[str] = frozenset()) -> dict[str, int]:
    """Each new node's edges once the batch is indexed (what importance_scorer's degree counts): its connections
    (one edge per target and type, each target taken to exist), the batch's connections to it, and the self node's
    `defines` edge for the ids in `defined`."""
    out = {n.id: int(n.id in defined) for n in nodes}
    for node in nodes:
        for target, _ in {(c.target, c.edge) for c in node.connections if c.target != node.id}:
            out[node.id] += 1
            if target in out:
                out[target] += 1
    return out


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
