"""The jobs that need no LLM: importance_scorer, decay_manager (plus ledger retention), auto_cluster, index_updater."""

from __future__ import annotations

import logging
from datetime import timedelta

from maintenance.detectors import clusters as cl
from maintenance.detectors import lifecycle as lc
from maintenance.models import JobRunRow, MaintenanceSessionRow, NodeSeenRow, ProposalRow
from maintenance.registry import maintenance_job
from maintenance.selectors import decided_at_by_key, degrees, facts_all, facts_where, neighbour_spaces
from maintenance.services.context import RunContext
from maintenance.services.proposals import propose, proposals_expire, proposals_expire_stale
from memory.domain.enums import Tier
from memory.domain.lifecycle import LifecycleConf
from memory.domain.requests import NodePatch
from memory.errors import OrmahError
from memory.models import NodeRow
from memory.services import (
    audit_prune,
    core_cap_enforce,
    index_sync,
    merge_history_prune,
    nodes_importance_set,
    nodes_update,
)
from memory.services.batches import PER_HOLD
from memory.services.surfacing import surfacing_prune
from memory.services.verification import verification_prune

logger = logging.getLogger(__name__)
IMPORTANCE_BATCH = 100  # one write call per batch: the time bound is checked between them
AUDIT_DAYS_BY_OPERATION = {"importance": 7, "connect": 90}


@maintenance_job("importance_scorer", every_minutes=120, cycle=10,
                 description="Recompute importance from access, edges and recency")
def importance_run(ctx: RunContext) -> None:
    """Recompute every node's importance (it moves with time), write changes of at least 0.01, keep the core cap."""
    changes = lc.importance_changes(list(facts_all().values()), degrees(), ctx.now)
    ctx.counts["changed"] = len(changes)
    uids = sorted(changes)
    for start in range(0, len(uids), IMPORTANCE_BATCH):
        if ctx.out_of_time():
            break
        batch = {u: changes[u] for u in uids[start:start + IMPORTANCE_BATCH]}
        ctx.counts["written"] += nodes_importance_set(values=batch, now=ctx.now)
    demoted = core_cap_enforce(now=ctx.now)  # new importance may reorder core; hand edits may have overfilled it
    if demoted:
        ctx.counts["core_demoted"] = len(demoted)


@maintenance_job("decay_manager", every_minutes=1440, cycle=80,
                 description="Archive stale working memories; ledger retention")
def decay_run(ctx: RunContext) -> None:
    """Archive working memories whose retrievability fell below 0.3; identity ones are proposed instead."""
    threshold = LifecycleConf().decay_threshold
    decided = decided_at_by_key("decay")
    archive = []
    for node in facts_where(tier=Tier.WORKING, is_self=False):
        if not lc.decays(node, ctx.now, threshold):
            continue
        if not node.identity:
            archive.append(node.uid)
            continue
        if ctx.out_of_time():
            break
        draft = lc.decay_draft(node, lc.retrievability(node, ctx.now))
        if decided.get(draft.key, node.last_accessed) > node.last_accessed:
            continue  # reviewed since it was last used: not offered again
        propose(ctx, draft)
    _patch_in_holds(ctx, [(uid, NodePatch(tier=Tier.ARCHIVAL)) for uid in archive], done="archived", what="Decay")
    ledgers_prune(ctx)


def _patch_in_holds(ctx: RunContext, patches: list[tuple[str, NodePatch]], *, done: str, what: str) -> None:
    """Write the patches a few per hold of the write lock (memory.services.nodes_update), the time bound checked
    before each hold; count each written under `done`, each refused (logged) under `skipped`."""
    for start in range(0, len(patches), PER_HOLD):
        if ctx.out_of_time():
            break
        batch = patches[start:start + PER_HOLD]
        for (uid, _), result in zip(batch, nodes_update(patches=batch, now=ctx.now)):
            if isinstance(result, OrmahError):
                logger.info("%s of %s skipped: %s", what, uid, result)
                ctx.counts["skipped"] += 1
                continue
            ctx.counts[done] += 1


def ledgers_prune(ctx: RunContext) -> None:
    """Retention for the ledgers: proposals, audit log, runs, sessions, merges, seen marks, surfacing events and
    verification records (a memory's latest verification is always kept). docs/jobs.md lists each window."""
    now, conf = ctx.now, ctx.conf
    old = now - timedelta(days=conf.ledger_retention_days)
    ctx.counts["proposals_expired"] = proposals_expire(now=now) + proposals_expire_stale(now=now)
    ctx.counts["audit_pruned"] = audit_prune(now=now, default_days=conf.audit_retention_days,
                                             max_rows=conf.audit_max_rows, days_by_operation=AUDIT_DAYS_BY_OPERATION)
    MaintenanceSessionRow.objects.filter(status="awaiting_results", expires_at__lte=now).update(status="expired")
    JobRunRow.objects.filter(finished_at__isnull=True, started_at__lt=now - timedelta(days=1)).update(
        status="abandoned", error="the process ended before the run did")
    ctx.counts["ledger_pruned"] = sum((
        ProposalRow.objects.exclude(status="pending").filter(decided_at__lt=old).delete()[0],
        JobRunRow.objects.filter(started_at__lt=old).delete()[0],
        MaintenanceSessionRow.objects.filter(created_at__lt=old).delete()[0],
        NodeSeenRow.objects.exclude(node_uid__in=NodeRow.objects.values("uid")).delete()[0],
        merge_history_prune(before=now - timedelta(days=conf.merge_undo_days)),
    ))
    ctx.counts["surfacing_pruned"] = surfacing_prune(older_than_days=conf.surfacing_retention_days, now=now)
    ctx.counts["verification_pruned"] = verification_prune(
        before=now - timedelta(days=conf.verification_retention_days), keep_latest=True)


@maintenance_job("auto_cluster", every_minutes=60, cycle=60,
                 description="Give spaceless memories their neighbours' majority space")
def cluster_run(ctx: RunContext) -> None:
    """Give spaceless, unlocked memories the majority space of their neighbours (identity memories stay global)."""
    nodes = [n for n in facts_where(space__isnull=True, space_locked=False, is_self=False) if not n.identity]
    ctx.counts["candidates"] = len(nodes)
    spaces = neighbour_spaces([n.uid for n in nodes])
    votes = [(n.uid, cl.space_vote(spaces[n.uid])) for n in nodes]
    _patch_in_holds(ctx, [(uid, NodePatch(space=space)) for uid, space in votes if space is not None],
                    done="assigned", what="Auto-cluster")


@maintenance_job("index_updater", every_minutes=1, cycle=20, exclusive=False,
                 description="Incremental derived-index sync")
def index_run(ctx: RunContext) -> None:
    """Incremental index sync: new, changed and vanished files."""
    report = index_sync()
    ctx.counts.update({"indexed": report.indexed, "removed": report.removed, "embedded": report.embedded,
                       "malformed": len(report.malformed)})
