"""The one error hierarchy: each error's code and the HTTP status the API maps it to (a subclass inherits its
family's status: every Conflict is a 409, every NodeNotFound a 404)."""

from __future__ import annotations

import pytest

from maintenance.errors import JobBusy, LLMBudgetExhausted, ProposalNotFound, StaleProposal, UnknownJob
from memory.errors import AmbiguousNodeRef, Conflict, NodeMerged, NodeNotFound, OrmahError, WriteConflict


@pytest.mark.parametrize(("error", "family", "code", "status"), [
    (WriteConflict, Conflict, "write_conflict", 409),
    (JobBusy, Conflict, "busy", 409),
    (StaleProposal, Conflict, "stale_proposal", 409),
    (AmbiguousNodeRef, OrmahError, "ambiguous_ref", 409),
    (NodeMerged, NodeNotFound, "not_found", 404),
    (UnknownJob, NodeNotFound, "unknown_job", 404),
    (ProposalNotFound, NodeNotFound, "proposal_not_found", 404),
    (LLMBudgetExhausted, OrmahError, "llm_budget_exhausted", 502),
])
def test_each_error_has_its_code_and_its_family_status(error, family, code, status):
    assert (issubclass(error, family), error.code, error.http_status) == (True, code, status)
