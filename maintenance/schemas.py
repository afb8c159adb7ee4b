"""Request and response shapes of the maintenance API (ninja schemas are pydantic models)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator, model_validator

from maintenance.detectors.links import normalise_relationship
from maintenance.services.proposals import ResultEdit

EDGE_TYPES = ("supports", "contradicts", "evolved_from", "part_of", "depends_on", "related_to", "none")


class StrictIn(Schema):
    """A request body: an unknown key is a 422 naming it, as on the memory routes (a misspelt `job_id` must not
    start a new maintenance session, a misspelt `merged_content` must not merge without the agent's text)."""

    model_config = ConfigDict(extra="forbid")


class EdgeResultIn(StrictIn):
    node_a_id: str = Field(min_length=36, max_length=36)
    node_b_id: str = Field(min_length=36, max_length=36)
    edge_type: str = "none"
    reason: str = Field(default="", max_length=1000)

    @field_validator("edge_type", mode="before")
    @classmethod
    def _edge(cls, value: Any) -> str:
        text = str(value or "none").strip().lower()
        return text if text in ("evolved_from", "none") else normalise_relationship(text)


class MergeResultIn(StrictIn):
    keep_id: str = Field(min_length=36, max_length=36)
    discard_id: str = Field(min_length=36, max_length=36)
    merged_content: str | None = None
    merged_title: str | None = None


class ConsolidationIn(StrictIn):
    node_ids: list[str] = Field(min_length=2, max_length=10)
    title: str = Field(min_length=1, max_length=300)
    content: str = Field(min_length=1)
    type: str = "concept"


class MaintenanceResults(StrictIn):
    edges: list[EdgeResultIn] = Field(default_factory=list, max_length=500)
    merges: list[MergeResultIn] = Field(default_factory=list, max_length=200)
    consolidations: list[ConsolidationIn] = Field(default_factory=list, max_length=50)


class MaintenanceIn(StrictIn):
    """{} starts phase 1; {job_id} asks for status; {job_id, results} is phase 2 (results need their job_id)."""

    job_id: str | None = None
    results: MaintenanceResults | None = None

    @model_validator(mode="after")
    def _results_need_a_job(self) -> MaintenanceIn:
        if self.results is not None and not self.job_id:
            raise ValueError("results answer a maintenance session: send them with the job_id phase 1 returned")
        return self


class MaintenanceOut(Schema):
    job_id: str | None = None
    status: str
    summary: str = ""
    batches: dict | None = None
    expires_at: datetime | None = None
    apply_summary: dict | None = None


class ProposalDecisionIn(StrictIn):
    action: Literal["approve", "reject", "approved", "rejected"]
    result: ResultEdit | None = Field(default=None, description=(
        "approve a merge or consolidation with your title, content or tags instead of the proposed ones (a field "
        "left out, or a blank title, is as proposed; GET .../result gives them)"))
    seen: dict[str, str] | None = Field(default=None, description=(
        "memory id -> file hash, as GET .../result gave them: when a file differs now, an approval applies nothing "
        "(409 proposal_changed, with the memories as they are now) and the proposal stays pending; a rejection "
        "writes nothing and is not refused"))


class ProposalGroupDecisionIn(StrictIn):
    action: Literal["approve", "reject", "approved", "rejected"]


class ProposalResultOut(Schema):
    proposal_id: str
    kind: str
    title: str
    content: str
    tags: list[str]
    kept_tags: list[str]
    seen: dict[str, str]


class ProposalGroupOut(Schema):
    group_key: str
    label: str
    kind: str
    count: int
    priority: float
    created_at: datetime
    proposal_ids: list[str]


class GroupDecisionOut(Schema):
    group_key: str
    status: str
    decided: list[str]
    stale: list[str]
    failed: dict[str, str]


class ProposalOut(Schema):
    id: str
    kind: str
    group_key: str = ""
    group_label: str = ""
    status: str
    action_summary: str
    reason: str
    score: float
    priority: float
    nodes: list[dict]
    merged_preview: str | None = None
    payload: dict
    created_at: datetime
    expires_at: datetime
    decided_at: datetime | None = None
    result: dict = Field(default_factory=dict)


class JobOutcomeOut(Schema):
    job: str
    status: str
    counts: dict
    error: str = ""
    started_at: datetime | None = None
    finished_at: datetime | None = None
    seconds: float | None = None


class TaskOut(Schema):
    id: str
    name: str
    description: str
    interval_minutes: int
    uses_llm: bool
    next_run: datetime | None = None
    paused: bool
    last_run: JobOutcomeOut | None = None


class MergeOut(Schema):
    merge_id: str
    kept_id: str
    removed_id: str
    reason: str
    merged_at: datetime
    undone_at: datetime | None = None
