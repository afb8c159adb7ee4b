"""Recall warnings for memories: temporal relations, missing citations and, given a workspace, drift.

Warnings are additive: nothing is filtered out because of them (docs/trust.md). Every surface that shows
memories (recall, whisper, context packs, the UI) gets its warnings from `memory_warnings`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from memory.context.selectors import known_events, node_labels, outdated_uids, trust_facts
from memory.context.workspace import file_fact
from memory.domain.node import as_utc, utcnow
from memory.domain.search import SearchHit
from memory.domain.trust import (
    RecallWarning,
    RelationKind,
    WorkspaceState,
    citation_warnings,
    drift_warnings,
    same_workspace,
    temporal_warnings,
)


def memory_warnings(*, uids: Sequence[str], now: datetime | None = None,
                    workspace: WorkspaceState | None = None) -> dict[str, tuple[RecallWarning, ...]]:
    """Warnings per memory id (every id is a key; most map to an empty tuple)."""
    now = as_utc(now or utcnow())
    facts = trust_facts(uids=uids)
    cited = [c for f in facts.values() for c in f.citations]
    known = known_events(ids=cited) if cited else set()
    others = {r.from_id if r.to_id == f.uid else r.to_id for f in facts.values() for r in f.relations}
    labels = node_labels(uids=list(others)) if others else {}
    retired = outdated_uids(uids=list(others), now=now) if others else set()
    out: dict[str, tuple[RecallWarning, ...]] = {uid: () for uid in uids}
    for uid, f in facts.items():
        # a contradiction by a memory that was itself marked outdated no longer stands
        relations = [r for r in f.relations if not (r.kind == RelationKind.CONTRADICTS and
                                                    (r.from_id if r.to_id == uid else r.to_id) in retired)]
        found = temporal_warnings(uid, relations, now=now, labels=labels)
        found += citation_warnings(uid, f.citations, known)
        if workspace is not None and not f.provenance.is_empty:
            checked = file_fact(f.provenance, workspace) if same_workspace(f.provenance, workspace) else None
            found += drift_warnings(uid, f.provenance, workspace, checked)
        out[uid] = tuple(found)
    return out


def hits_with_warnings(hits: Sequence[SearchHit], *, now: datetime | None = None,
                       workspace: WorkspaceState | None = None) -> list[SearchHit]:
    """The same hits, each carrying its warnings."""
    if not hits:
        return []
    found = memory_warnings(uids=[h.node_id for h in hits], now=now, workspace=workspace)
    return [replace(h, warnings=found.get(h.node_id, ())) for h in hits]
