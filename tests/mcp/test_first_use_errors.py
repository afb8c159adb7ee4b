"""An agent's first mistakes with `ormah mcp` (the real server over stdio, the SDK's client): each answers one
sentence that says what to do, and nothing is done silently with a misspelt argument."""

from __future__ import annotations

import pytest

from memory.models import NodeRow
from tests.mcp.stdio import run_tool_calls
from tests.mcp.test_proposal_edit import _merge

pytestmark = pytest.mark.slow


def test_first_mistakes_get_a_sentence_that_says_what_to_do(ormah_server, tmp_path):
    _, _, pid = _merge()
    steps = [("remember", {"content": "Deploys need two approvals", "tag": "ops"}),
             ("list_recent", {"limit": 5, "tpyes": ["fact"]}),
             ("get_self", {"space": "billing"}),
             ("recall_node", {"node_id": "  "}),
             ("proposal_result", {"proposal_id": ""}),
             ("context_pack", {"query": "deploys", "scope": "billing"}),
             ("list_proposals", {"kind": "merges"}),
             ("decide_proposal", {"proposal_id": pid[:8], "action": "approve", "seen": "ab-cd",
                                  "content": "Deploys: Tuesdays."})]
    out = run_tool_calls(ormah_server, tmp_path, steps)
    assert out == [
        (True, "remember has no argument 'tag'; its arguments are content, type, tier, title, space, tags, "
               "about_self, confidence, links."),
        (True, "list_recent has no argument 'tpyes'; its arguments are limit, types, space, tag, cursor."),
        (True, "get_self has no argument 'space'; it takes no arguments."),
        (True, "node_id is empty: give an id or a unique prefix of it (8 characters usually do)."),
        (True, "proposal_id is empty: give an id or a unique prefix of it (8 characters usually do)."),
        (True, "scope: 'billing' is not one of global, user, project:NAME, workspace:/PATH or session:ID."),
        (True, "Invalid kind for list_proposals: Input should be 'merge', 'conflict', 'decay', 'link' or "
               "'consolidation'."),
        (True, f"seen 'ab-cd' is not from proposal {pid[:8]}: call proposal_result for it and pass the seen value "
               "it shows."),
    ]
    assert not NodeRow.objects.filter(content="Deploys need two approvals").exists()
