"""Context packs: the router's policies over a real store, warnings carried instead of dropped, the budget."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory.context.pack import context_pack_build
from memory.domain.packing import estimate_tokens, pack_text
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import ContextPackIn, EvidenceIn, RelationIn, SessionStateIn, VerificationIn
from memory.services import (
    core_block_set,
    evidence_record,
    relation_create,
    session_state_set,
    verification_record,
)
from tests.trust.conftest import NOW, git

LATER = NOW + timedelta(hours=1)


@pytest.fixture
def store(mem, repo):
    """A small store: a core rule, facts (one superseded), a file-bound resource, evidence and a session state."""
    rule = core_block_set(ref=mem("Always run make check before pushing", auto_link=False, space="shop").id,
                          pinned=True, authority=50, now=NOW)
    old = mem("The shop API listens on port 8080", auto_link=False, space="shop", created=NOW)
    new = mem("The shop API listens on port 9090 behind the proxy", auto_link=False, space="shop", created=NOW)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES), now=NOW)
    resource = mem("The shop API port is configured in src/app.py", auto_link=False, space="shop", created=NOW,
                   workspace_path=str(repo.root), git_branch="main", git_commit=repo.head, file_path="src/app.py")
    evidence_record(items=[EvidenceIn(kind="user_message", text="Why does the shop API port keep changing?",
                                      session_id="s1")], now=NOW)
    session_state_set(session_id="s1", request=SessionStateIn(current_goal="Move the shop API to port 9090",
                                                              working_set=["src/app.py"]), now=NOW)
    return {"rule": rule.id, "old": old.id, "new": new.id, "resource": resource.id, "repo": repo}


def build(**fields):
    return context_pack_build(request=ContextPackIn(**fields), now=LATER)


def test_auto_packs_core_session_facts_resources_and_evidence_in_that_order(store):
    result = build(query="shop API port", budget_tokens=2000, session_id="s1")
    kinds = [i.kind.value for i in result.items]
    assert kinds[:2] == ["core", "session"]
    assert {"fact", "resource", "evidence"} <= set(kinds)
    assert kinds == sorted(kinds, key=["core", "session", "fact", "resource", "evidence"].index)
    assert result.estimated_tokens <= 2000


def test_a_superseded_memory_stays_in_the_pack_with_its_warning(store):
    result = build(query="shop API port", budget_tokens=2000)
    assert store["old"] in [i.id for i in result.items]
    assert [(w.item_id, w.kind.value, w.related_id) for w in result.recall_warnings] == [
        (store["old"], "temporal_supersession", store["new"])]


def test_task_policy_packs_core_and_session_state_and_workspace_policy_core_and_resources(store):
    task = build(query="shop API port", budget_tokens=2000, policy="task", session_id="s1")
    assert [(i.kind.value, i.id) for i in task.items] == [("core", store["rule"]), ("session", "s1")]
    workspace = build(query="shop API port", budget_tokens=2000, policy="workspace", session_id="s1")
    assert [(i.kind.value, i.id) for i in workspace.items] == [("core", store["rule"]),
                                                                ("resource", store["resource"])]
    assert workspace.items[1].text.startswith("src/app.py: ")


def test_drift_warnings_when_the_request_names_the_workspace(store):
    repo = store["repo"]
    git(repo.root, "checkout", "-q", "-b", "proxy")
    repo.write("src/app.py", "PORT = 9090\n")
    repo.commit("port 9090")
    result = build(query="shop API port", budget_tokens=2000, policy="workspace",
                   workspace={"path": str(repo.root)})
    assert sorted(w.kind.value for w in result.recall_warnings if w.item_id == store["resource"]) == [
        "branch_drift", "commit_drift"]


def test_the_latest_non_passed_verification_is_a_warning(store):
    verification_record(request=VerificationIn(target_id=store["rule"], status="passed", checker="ci"), now=NOW)
    verification_record(request=VerificationIn(target_id=store["rule"], status="failed", checker="ci",
                                               message="make check is gone"), now=NOW + timedelta(minutes=1))
    result = build(query="", budget_tokens=500, policy="task")
    assert [(w.item_id, w.status.value, w.message) for w in result.verification_warnings] == [
        (store["rule"], "failed", "make check is gone")]
    verification_record(request=VerificationIn(target_id=store["rule"], status="passed", checker="ci"),
                        now=NOW + timedelta(minutes=2))
    assert build(query="", budget_tokens=500, policy="task").verification_warnings == ()


def test_the_pack_and_its_text_stay_within_small_budgets(store):
    for budget in (0, 12, 40, 90, 300):
        result = build(query="shop API port", budget_tokens=budget, session_id="s1")
        assert result.estimated_tokens <= budget
        assert estimate_tokens(pack_text(result)) <= result.estimated_tokens


def test_a_project_scope_keeps_other_projects_out(store, mem):
    other = mem("The blog API listens on port 8080 too", auto_link=False, space="blog")
    result = build(query="API port 8080", budget_tokens=2000, scope="project:shop")
    assert other.id not in [i.id for i in result.items]
    assert store["old"] in [i.id for i in result.items]
