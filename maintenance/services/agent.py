"""The two-phase agent maintenance protocol (reference §5.1): the calling agent acts as the LLM.

Phase 1 gathers candidate pairs (links, conflicts, merges) and consolidation clusters around memories changed
since the agent's last completed run, and stores them as a session that expires. Phase 2 takes the agent's
verdicts for exactly those pairs and clusters and applies them through memory services. One session is live at a
time (a new phase 1 replaces an unanswered one); both phases hold the maintenance lock, so they never overlap a job.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from pydantic import ValidationError

from maintenance.conf import get_conf
from maintenance.detectors import conflicts as cf
from maintenance.detectors import duplicates as dup
from maintenance.detectors import links as lk
from maintenance.detectors.facts import EdgeDraft, NodeFacts, Pair
from maintenance.detectors.similarity import nearest
from maintenance.errors import SessionNotFound
from maintenance.locking import job_lock
from maintenance.models import MaintenanceSessionRow
from maintenance.schemas import MaintenanceResults
from maintenance.selectors import facts_all, linked_keys, session_get, vector_table
from maintenance.services.consolidation import clusters_for
from maintenance.services.context import Work, work_begin, work_finish
from maintenance.services.pairs import edge_apply, pairs_by_node
from memory.domain.enums import NodeType
from memory.domain.node import utcnow
from memory.errors import Conflict, OrmahError
from memory.services import automated_writes, node_merge, nodes_consolidate

JOB = "agent_maintenance"
LINK_MIN_COS = 0.55
PAIR_CONTENT_CHARS = 400
MAX_CLUSTERS = 4


def _brief(node: NodeFacts) -> dict:
    return {"id": node.uid, "title": node.title, "type": node.type, "space": node.space,
            "created": node.created.isoformat(), "content": node.content[:PAIR_CONTENT_CHARS]}


def _pair(pair: Pair) -> dict:
    return {"node_a": _brief(pair.a), "node_b": _brief(pair.b), "similarity": round(pair.cosine, 3)}


def _batches(facts: dict[int, NodeFacts], work: Work, size: int) -> tuple[dict, list[NodeFacts]]:
    """Pairs and clusters for the agent, and the candidates whose pairs all fit into the batches."""
    neighbours = nearest(vector_table(), [f.row_id for f in work.candidates], k=cf.NEIGHBOURS,
                         min_cos=cf.CANDIDATE_MIN_COS)
    linked, conflicted = linked_keys(), linked_keys(tuple(cf.CONFLICT_EDGES))
    out: dict[str, list] = {"links": [], "conflicts": [], "merges": [], "consolidations": []}
    covered, seen = [], set()
    for node in work.candidates:
        pairs = pairs_by_node([node], facts, neighbours, seen=seen, gone=set()).get(node.uid, [])
        merges = [p for p, _ in dup.duplicate_candidates(pairs)]
        conflicts = [p for p in cf.conflict_candidates(pairs, linked=conflicted) if p not in merges]
        links = [p for p in pairs if p.cosine >= LINK_MIN_COS and p.key not in linked and not (p.a.is_self or p.b.is_self)
                 and p not in merges and p not in conflicts][:lk.NEIGHBOURS]
        if any(len(out[k]) + len(v) > size for k, v in (("merges", merges), ("conflicts", conflicts), ("links", links))):
            break
        out["merges"] += [_pair(p) for p in merges]
        out["conflicts"] += [_pair(p) for p in conflicts]
        out["links"] += [_pair(p) for p in links]
        covered.append(node)
    clusters = clusters_for(facts, covered, taken=set(), max_clusters=MAX_CLUSTERS)
    out["consolidations"] = [{"node_ids": [n.uid for n in c], "nodes": [
        {**_brief(n), "content": n.content} for n in c]} for c in clusters]
    return out, covered


def maintenance_begin(*, now: datetime | None = None) -> MaintenanceSessionRow:
    """Phase 1: a new session with batches (status awaiting_results) or, with nothing to offer, status idle.

    Raises JobBusy while a job holds the maintenance lock.
    """
    conf, now = get_conf(), now or utcnow()
    with job_lock(conf.job_lock_file):
        MaintenanceSessionRow.objects.filter(status="awaiting_results", expires_at__lte=now).update(status="expired")
        MaintenanceSessionRow.objects.filter(status="awaiting_results").update(status="replaced", finished_at=now)
        facts = facts_all()
        work = work_begin(JOB, facts.values())
        batches, covered = _batches(facts, work, conf.batch_size)
        offered = sum(len(v) for v in batches.values())
        complete = len(covered) == len(work.candidates)
        left = [f.indexed_seq for f in work.candidates[len(covered):]]
        session = MaintenanceSessionRow.objects.create(
            session_id=str(uuid.uuid4()), status="awaiting_results" if offered else "idle", batches=batches,
            node_hashes={"top": work.top, "left_min_seq": min(left) if left else None, "complete": complete,
                         "covered": {f.uid: f.embed_hash for f in covered}},
            created_at=now, expires_at=now + timedelta(minutes=conf.session_minutes),
            finished_at=None if offered else now,
        )
        if not offered:
            _advance(session, facts)
    return session


def _advance(session: MaintenanceSessionRow, facts: dict[int, NodeFacts]) -> None:
    """Mark the session's covered nodes examined and move the agent's watermark."""
    progress = session.node_hashes
    by_uid = {f.uid: f for f in facts.values()}
    done = [by_uid[u] for u in progress["covered"] if u in by_uid]
    work = Work(job=JOB, candidates=done, top=progress["top"], done=done)
    if not progress["complete"] and progress["left_min_seq"] is not None:
        work.top = progress["left_min_seq"] - 1
    work_finish(work)


def maintenance_status(*, session_id: str, now: datetime | None = None) -> MaintenanceSessionRow:
    """A session as it is now (an unanswered one past its deadline reads as expired). Raises SessionNotFound."""
    session = session_get(session_id)
    if session is None:
        raise SessionNotFound(f"No maintenance session {session_id} (lost or never started)")
    if session.status == "awaiting_results" and session.expires_at <= (now or utcnow()):
        session.status = "expired"
        session.save(update_fields=["status"])
    return session


def maintenance_apply(*, session_id: str, results: MaintenanceResults, now: datetime | None = None
                      ) -> MaintenanceSessionRow:
    """Phase 2: apply the agent's verdicts for the offered pairs and clusters; items outside them are refused.

    Raises SessionNotFound, Conflict (expired, replaced, already applied), JobBusy.
    """
    conf, now = get_conf(), now or utcnow()
    with job_lock(conf.job_lock_file):
        session = maintenance_status(session_id=session_id, now=now)
        claimed = MaintenanceSessionRow.objects.filter(pk=session.pk, status="awaiting_results").update(
            status="running_phase2")
        if not claimed:
            raise Conflict(f"Maintenance session {session_id} is {session.status}; start a new one")
        with automated_writes("maintenance agent"):  # never edits a read-only core block (docs/trust.md)
            summary = _apply(session.batches, results, now)
        session.refresh_from_db()
        _advance(session, facts_all())
        session.status, session.apply_summary, session.finished_at = "completed", summary, now
        session.save(update_fields=["status", "apply_summary", "finished_at"])
    return session


def _apply(batches: dict, results: MaintenanceResults, now: datetime) -> dict:
    pairs = {":".join(sorted((p["node_a"]["id"], p["node_b"]["id"]))): p
             for kind in ("links", "conflicts", "merges") for p in batches.get(kind, [])}
    clusters = [set(c["node_ids"]) for c in batches.get("consolidations", [])]
    summary = {"edges": 0, "checked": 0, "merges": 0, "consolidations": 0, "refused": [], "errors": []}

    def attempt(what: str, action) -> bool:
        try:
            action()
            return True
        except (OrmahError, ValidationError) as exc:
            summary["errors"].append(f"{what}: {exc.message if isinstance(exc, OrmahError) else exc}")
            return False

    for e in results.edges:
        offered = pairs.get(":".join(sorted((e.node_a_id, e.node_b_id))))
        if offered is None:
            summary["refused"].append(f"edge {e.node_a_id[:8]}-{e.node_b_id[:8]}: not offered")
        elif e.edge_type == "none":
            summary["checked"] += 1
        else:
            weight = cf.CONFLICT_WEIGHT if e.edge_type in cf.CONFLICT_EDGES else offered["similarity"]
            draft = EdgeDraft(e.node_a_id, e.node_b_id, e.edge_type, weight, e.reason or f"{e.edge_type} (agent)")
            summary["edges"] += attempt(f"edge {e.node_a_id[:8]}", lambda: edge_apply(draft, job=JOB, now=now))
    for m in results.merges:
        if ":".join(sorted((m.keep_id, m.discard_id))) not in pairs:
            summary["refused"].append(f"merge {m.keep_id[:8]}-{m.discard_id[:8]}: not offered")
            continue
        summary["merges"] += attempt(f"merge {m.discard_id[:8]}", lambda: node_merge(
            keep_ref=m.keep_id, discard_ref=m.discard_id, merged_title=m.merged_title,
            merged_content=m.merged_content, reason="agent maintenance", detail={"job": JOB}, now=now))
    for c in results.consolidations:
        if len(set(c.node_ids)) < 2 or not any(set(c.node_ids) <= cluster for cluster in clusters):
            summary["refused"].append(f"consolidation of {len(c.node_ids)}: not an offered cluster")
            continue
        type_ = c.type if c.type in {t.value for t in NodeType} else "concept"
        summary["consolidations"] += attempt("consolidation", lambda: nodes_consolidate(
            source_refs=c.node_ids, title=c.title, content=c.content, type=NodeType(type_),
            reason="agent maintenance", now=now))
    return summary
