"""Errors of the maintenance app, in Ormah's one hierarchy (mapped to HTTP by the API's single handler)."""

from __future__ import annotations

from memory.errors import Conflict, NodeNotFound, OrmahError


class JobBusy(Conflict):
    """Another job that changes memories holds the maintenance lock."""

    code = "busy"


class StaleProposal(Conflict):
    """A memory a proposal was made from changed or vanished since; the proposal has expired."""

    code = "stale_proposal"


class ProposalChanged(Conflict):
    """A memory a proposal reads changed on disk since the caller was shown it; nothing applied, still pending.

    details: {"proposal_id", "changed": [{"id", "title", "content", "hash"} or {"id", "gone": true}]}.
    """

    code = "proposal_changed"


class UnknownJob(NodeNotFound):
    """No job by that name."""

    code = "unknown_job"


class ProposalNotFound(NodeNotFound):
    """No proposal with that id."""

    code = "proposal_not_found"


class SessionNotFound(NodeNotFound):
    """No maintenance session with that id (or it was lost)."""

    code = "session_not_found"


class LLMUnavailable(OrmahError):
    """The LLM endpoint failed after its retries, or answered with something that is not the asked-for JSON."""

    code = "llm_unavailable"
    http_status = 502


class LLMBudgetExhausted(LLMUnavailable):
    """This run has used its cap of LLM calls."""

    code = "llm_budget_exhausted"


class LLMOutOfTime(LLMBudgetExhausted):
    """The run reached its time bound before (or while) asking the LLM: the job stops and keeps its watermark."""

    code = "llm_out_of_time"
