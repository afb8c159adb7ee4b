"""Transcript capture writes evidence events, and the memories it stores cite them and carry the workspace."""

from __future__ import annotations

import json

from memory import runtime
from memory.models import EvidenceRow, NodeRow
from memory.selectors import node_get
from whisper.hook_env import workspace_for
from tests.trust.conftest import git


def _transcript(path, session="sess-42"):
    lines = [
        {"type": "user", "sessionId": session, "message": {"content": "Remember that the shop API port is 9090."}},
        {"type": "assistant", "sessionId": session, "message": {"content": [{"type": "text", "text": "Noted."}]}},
    ]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_the_hook_reads_branch_and_commit_from_the_repository(repo):
    git(repo.root, "checkout", "-q", "-b", "feature/x")
    assert workspace_for(str(repo.root / "src")) == {"path": str(repo.root), "branch": "feature/x",
                                                     "commit": repo.head}
    assert workspace_for("/") is None


def test_capture_writes_turn_events_and_the_memory_cites_its_turn_with_provenance(api, repo, tmp_path):
    transcript = _transcript(tmp_path / "t.jsonl")
    body = api.post("/api/agent/ingest/transcript", {
        "transcript_path": str(transcript), "cwd": str(repo.root / "src"), "min_user_turns": 1,
        "workspace": workspace_for(str(repo.root / "src"))}).json()
    assert body["status"] == "stored" and len(body["stored"]) == 1
    events = list(EvidenceRow.objects.order_by("offset").values_list("kind", "session_id", "text"))
    assert events == [("user_message", "sess-42", "Remember that the shop API port is 9090."),
                      ("assistant_message", "sess-42", "Noted.")]
    node = node_get(store=runtime.store(), ref=body["stored"][0])
    assert node.source_event_ids == (EvidenceRow.objects.get(kind="user_message").uid,)
    assert (node.provenance.workspace_path, node.provenance.git_branch, node.provenance.git_commit) == (
        str(repo.root), "main", repo.head)
    repo.write("NEWS", "9090\n")
    repo.commit("news")
    hits = api.post("/api/agent/recall", {"query": "shop API port", "workspace": {"path": str(repo.root)}}).json()
    assert [w["kind"] for w in hits["results"][0]["warnings"]] == ["commit_drift"]


def test_a_bad_workspace_from_the_hook_never_costs_the_capture(api, tmp_path):
    transcript = _transcript(tmp_path / "t.jsonl")
    body = api.post("/api/agent/ingest/transcript", {"transcript_path": str(transcript), "min_user_turns": 1,
                                                     "workspace": {"path": "relative/path", "commit": "xyz"}}).json()
    assert body["status"] == "stored"
    assert NodeRow.objects.get(uid=body["stored"][0]).trust_json == "{}"
