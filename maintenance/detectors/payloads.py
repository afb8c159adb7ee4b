"""What approving a proposal applies: one typed payload per proposal kind (stored as JSON in ProposalRow.payload)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from maintenance.detectors.facts import ProposalKind


class _Payload(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")

    def as_json(self) -> dict:
        return self.model_dump(mode="json")


class MergePayload(_Payload):
    """Fold `discard_id` into `keep_id`, optionally rewriting the keeper's title and content."""

    keep_id: str
    discard_id: str
    merged_title: str | None = None
    merged_content: str | None = None
    score: dict | None = None  # the duplicate score's parts, for display


class EdgePayload(_Payload):
    """Write one edge source -> target (conflict: contradicts / evolved_from; link: related_to across spaces)."""

    source_id: str
    target_id: str
    edge: str
    weight: float = Field(ge=0.0, le=1.0)
    edge_reason: str | None = None
    signals: list[str] = Field(default_factory=list)


class DecayPayload(_Payload):
    """Move an identity memory to archival."""

    node_id: str
    tier: str = "archival"


class ConsolidationPayload(_Payload):
    """Write one memory from several and archive the sources."""

    node_ids: list[str] = Field(min_length=2)
    title: str
    content: str
    type: str = "concept"


Payload = MergePayload | EdgePayload | DecayPayload | ConsolidationPayload
PAYLOADS: dict[ProposalKind, type[_Payload]] = {
    ProposalKind.MERGE: MergePayload, ProposalKind.CONFLICT: EdgePayload, ProposalKind.LINK: EdgePayload,
    ProposalKind.DECAY: DecayPayload, ProposalKind.CONSOLIDATION: ConsolidationPayload,
}


def payload_load(kind: str, data: dict) -> Payload:
    """The typed payload of a stored proposal; raises ValueError (unknown kind) or pydantic's ValidationError."""
    try:
        model = PAYLOADS[ProposalKind(kind)]
    except ValueError:
        raise ValueError(f"Unknown proposal kind {kind}") from None
    return model.model_validate(data)
