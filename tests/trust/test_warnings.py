"""Every recall warning kind, from real node files, real evidence files and a real git repository."""

from __future__ import annotations

from datetime import timedelta

from memory import runtime
from memory.context.warnings import memory_warnings
from memory.context.workspace import workspace_state
from memory.domain.requests import NodeCreate
from memory.domain.trust import RelationKind
from memory.domain.trust_requests import RelationIn
from memory.services import index_sync
from memory.services.evidence import evidence_log, evidence_sync, node_remember
from memory.services.trust import relation_create
from tests.trust.conftest import NOW, git, sha256_of


def kinds(uid: str, **kw) -> list[str]:
    return [w.kind.value for w in memory_warnings(uids=[uid], now=NOW, **kw)[uid]]


def test_a_plain_memory_has_no_warnings(mem):
    node = mem("The shop API listens on port 8080", auto_link=False)
    assert kinds(node.id) == []


def test_supersession_warns_on_the_older_memory_only(mem):
    old = mem("The shop API listens on port 8080", auto_link=False)
    new = mem("The shop API listens on port 9090 since the proxy move", auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES))
    found = memory_warnings(uids=[old.id, new.id], now=NOW)
    assert [(w.kind.value, w.related_id) for w in found[old.id]] == [("temporal_supersession", new.id)]
    assert found[new.id] == ()


def test_a_supersedes_edge_written_by_hand_in_the_file_is_read_as_evolved_from(mem, home):
    old = mem("Deploys run on Tuesdays", auto_link=False)
    new = mem("Deploys run on Thursdays now", auto_link=False)
    path = runtime.store().path_for(new.id)
    text = path.read_text().replace("created:", f"connections:\n- edge: supersedes\n  target: {old.id}\ncreated:", 1)
    path.write_text(text)
    index_sync()
    assert kinds(old.id) == ["temporal_supersession"]
    assert runtime.store().read(path)[0].connections[0].edge == "evolved_from"


def test_contradiction_warns_on_both_ends(mem):
    a = mem("Billing uses PostgreSQL 16", auto_link=False)
    b = mem("Billing uses MySQL 8", auto_link=False)
    relation_create(request=RelationIn(from_id=a.id, to_id=b.id, relation=RelationKind.CONTRADICTS))
    assert (kinds(a.id), kinds(b.id)) == (["temporal_contradiction"], ["temporal_contradiction"])


def test_a_relation_outside_its_validity_window_gives_no_warning(mem):
    old = mem("The office is in Berlin", auto_link=False)
    new = mem("The office is in Hamburg", auto_link=False)
    relation_create(request=RelationIn(from_id=new.id, to_id=old.id, relation=RelationKind.SUPERSEDES,
                                       valid_from=NOW + timedelta(days=30)))
    assert kinds(old.id) == []
    assert [w.kind.value for w in memory_warnings(uids=[old.id], now=NOW + timedelta(days=31))[old.id]] == [
        "temporal_supersession"]


def test_citation_missing_after_the_evidence_file_loses_the_event(mem, home):
    node = node_remember(request=NodeCreate(content="The release checklist lives in docs/release.md"),
                         auto_link=False).node
    assert kinds(node.id) == []
    for path in evidence_log().day_files():
        path.write_text("")  # the event is gone from the canonical file
    evidence_sync(full=True)
    found = memory_warnings(uids=[node.id], now=NOW)[node.id]
    assert [(w.kind.value, w.related_id) for w in found] == [("citation_missing", node.source_event_ids[0])]


def test_file_missing_and_hash_mismatch(mem, repo):
    app = repo.root / "src" / "app.py"
    common = dict(workspace_path=str(repo.root), git_branch="main", git_commit=repo.head, auto_link=False)
    hashed = mem("The app's port is set in src/app.py", file_path="src/app.py", content_sha256=sha256_of(app),
                 **common)
    gone = mem("Settings live in src/settings.py", file_path="src/settings.py", **common)
    ws = workspace_state(path=str(repo.root))
    assert (kinds(hashed.id, workspace=ws), kinds(gone.id, workspace=ws)) == ([], ["file_missing"])
    repo.write("src/app.py", "PORT = 9090\n")
    assert kinds(hashed.id, workspace=ws) == ["file_hash_mismatch"]
    app.unlink()
    assert kinds(hashed.id, workspace=ws) == ["file_missing"]


def test_branch_drift_when_the_workspace_moved_to_another_branch(mem, repo):
    node = mem("The feature flag defaults to off", workspace_path=str(repo.root), git_branch="main",
               auto_link=False)
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == []
    git(repo.root, "checkout", "-q", "-b", "feature/proxy")
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == ["branch_drift"]


def test_commit_drift_when_the_workspace_is_at_a_later_commit(mem, repo):
    node = mem("The app reads PORT at start-up", workspace_path=str(repo.root), git_commit=repo.head,
               auto_link=False)
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == []
    repo.write("README.md", "shop\n")
    repo.commit("readme")
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == ["commit_drift"]


def test_no_drift_check_for_a_memory_of_another_workspace(mem, repo, tmp_path):
    node = mem("Elsewhere the main branch is trunk", workspace_path=str(tmp_path / "other"), git_branch="trunk",
               file_path="x.py", auto_link=False)
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == []


def test_a_file_outside_the_workspace_is_never_read(mem, repo, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("x")
    node = mem("A memory naming a file outside the repository", file_path="../../secret.txt",
               content_sha256="0" * 64, auto_link=False)
    assert kinds(node.id, workspace=workspace_state(path=str(repo.root))) == []
