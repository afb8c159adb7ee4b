"""A decision's action, read the same way by proposal_decide and proposal_group_decide: approve(d) or reject(ed),
any case and padding; anything else is refused before a proposal is looked up."""

from __future__ import annotations

import pytest

from maintenance.errors import ProposalNotFound
from maintenance.services.proposals import proposal_decide, proposal_group_decide
from memory.errors import ValidationFailed

DECIDE = {
    "one": lambda action: proposal_decide(proposal_id="no-such-proposal", action=action),
    "group": lambda action: proposal_group_decide(group_key="no-such-group", action=action),
}


@pytest.mark.parametrize("way", sorted(DECIDE))
@pytest.mark.parametrize("action", ["maybe", "", None, "approves"])
def test_an_unknown_action_is_refused_first(db, way, action):
    with pytest.raises(ValidationFailed, match="^action must be approve or reject$"):
        DECIDE[way](action)


@pytest.mark.parametrize("way", sorted(DECIDE))
@pytest.mark.parametrize("action", [" Approve ", "REJECTED", "reject"])
def test_a_known_action_goes_on_to_the_lookup(db, way, action):
    with pytest.raises(ProposalNotFound):
        DECIDE[way](action)
