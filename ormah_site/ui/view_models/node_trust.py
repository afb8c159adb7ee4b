"""One memory's trust, for the node panel: its citations (and whether the ledger holds them), warnings, checks."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memory.context.selectors import evidence_rows, trust_facts, verification_list
from memory.context.warnings import memory_warnings
from memory.domain.node import PROVENANCE_KEYS, utcnow
from ormah_site.ui.view_models.pills import Pill, pill

CITATION_PREVIEW = 160


@dataclass(frozen=True)
class CitationView:
    event_id: str
    found: bool
    kind: str = ""
    at: datetime | None = None
    session_id: str | None = None
    preview: str = ""


@dataclass(frozen=True)
class CheckView:
    status: str
    checker: str
    message: str
    created: datetime


@dataclass(frozen=True)
class NodeTrust:
    """Everything the panel's trust section shows; evaluated, so the template never queries."""

    citations: list[CitationView]
    warnings: list[Pill]
    checks: list[CheckView]
    provenance: list[tuple[str, str]]

    @property
    def empty(self) -> bool:
        return not (self.citations or self.warnings or self.checks or self.provenance)


def node_trust(*, uid: str, now: datetime | None = None) -> NodeTrust:
    """Citations, recall warnings (no workspace: drift needs the agent's), recent checks and provenance."""
    now = now or utcnow()
    facts = trust_facts(uids=[uid]).get(uid)
    cited = list(facts.citations) if facts else []
    rows = evidence_rows(uids=cited)
    citations = []
    for event_id in cited:
        row = rows.get(event_id)
        if row is None:
            citations.append(CitationView(event_id=event_id, found=False))
            continue
        text = " ".join(row.text.split())
        citations.append(CitationView(
            event_id=event_id, found=True, kind=row.kind, at=row.at, session_id=row.session_id,
            preview=text if len(text) <= CITATION_PREVIEW else text[:CITATION_PREVIEW - 1] + "…"))
    provenance = [(k, getattr(facts.provenance, k)) for k in PROVENANCE_KEYS
                  if facts and getattr(facts.provenance, k) is not None]
    return NodeTrust(
        citations=citations,
        warnings=[pill(w) for w in memory_warnings(uids=[uid], now=now).get(uid, ())],
        checks=[CheckView(status=r.status, checker=r.checker, message=r.message, created=r.created)
                for r in verification_list(target_uid=uid, limit=5)],
        provenance=provenance,
    )
