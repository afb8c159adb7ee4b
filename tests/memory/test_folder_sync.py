"""`ormah sync PATH` (memory.services.folder_sync): a folder of memory files reconciled with the store both ways,
through the write door, on either engine. Real files, the real index and embedder."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory import runtime
from memory.domain.folder_sync import SyncStep
from memory.domain.markdown import render
from memory.domain.node import Node, new_node_id, utcnow
from memory.domain.requests import NodePatch
from memory.errors import ValidationFailed
from memory.models import AuditRow, NodeRow
from memory.selectors import node_get
from memory.services import index_sync, node_forget, node_update, self_ensure
from memory.services.folder_sync import folder_sync
from tests.memory.test_rebuild_invariant import snapshot
from tests.postgres import postgres_only


def tree(root: Path, folder: str = "nodes") -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((root / folder).glob("*.md"))}


def store_tree(home: Path) -> dict[str, bytes]:
    return tree(home / "memory")


def steps(report) -> dict[str, SyncStep]:
    return {i.node_id: i.step for i in report.items}


def in_folder(root: Path, node_id: str) -> Path:
    [path] = (root / "nodes").glob(f"*_{node_id[:8]}.md")
    return path


def edit(path: Path, old: str, new: str) -> None:
    data = path.read_bytes()
    assert old.encode() in data
    path.write_bytes(data.replace(old.encode(), new.encode()))


def new_file(root: Path, content: str) -> Node:
    now = utcnow()
    node = Node(id=new_node_id(), type="fact", tier="working", content=content, created=now, updated=now,
                last_accessed=now, source="person:dana")
    (root / "nodes").mkdir(parents=True, exist_ok=True)
    (root / "nodes" / f"fact_{node.short_id}.md").write_text(render(node), encoding="utf-8")
    return node


@pytest.fixture
def two(mem):
    a = mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    b = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    return a, b


@pytest.fixture
def synced(two, home, tmp_path):
    """A folder after its first sync with a store of two memories."""
    root = tmp_path / "checkout"
    folder_sync(path=root)
    return root


def test_the_first_sync_copies_every_memory_byte_for_byte_and_the_second_changes_nothing(two, home, tmp_path):
    root = tmp_path / "checkout"
    first = folder_sync(path=root)
    assert sorted(steps(first).values()) == [SyncStep.TO_FOLDER, SyncStep.TO_FOLDER]
    assert tree(root) == store_tree(home)
    assert (root / ".ormah-sync").is_file()

    again = folder_sync(path=root)
    assert sorted(steps(again).values()) == [SyncStep.IN_STEP, SyncStep.IN_STEP]
    assert (again.changes, again.clean) == ([], True)


def test_a_file_changed_in_the_folder_goes_into_the_store_and_the_index(two, synced, home):
    a, _ = two
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.TO_STORE
    assert store_tree(home) == tree(synced)
    assert "PostgreSQL 17" in node_get(store=runtime.store(), ref=a.id).content
    assert "PostgreSQL 17" in NodeRow.objects.get(uid=a.id).content
    [before] = AuditRow.objects.filter(node_uid=a.id, operation="sync").values_list("snapshot", flat=True)
    assert "PostgreSQL 16" in before


def test_a_memory_changed_in_the_store_is_written_to_the_folder(two, synced, home):
    a, _ = two
    node_update(ref=a.id, patch=NodePatch(content="The billing service uses PostgreSQL 18 for invoices"))

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.TO_FOLDER
    assert tree(synced) == store_tree(home)


def test_new_memories_on_either_side_are_copied_to_the_other(two, synced, mem, home):
    theirs = mem("The staging database listens on port 5433", auto_link=False)
    mine = new_file(synced, "The on-call rotation changes every Monday at noon")

    report = folder_sync(path=synced)

    assert (steps(report)[theirs.id], steps(report)[mine.id]) == (SyncStep.TO_FOLDER, SyncStep.TO_STORE)
    assert tree(synced) == store_tree(home)
    assert "on-call rotation" in NodeRow.objects.get(uid=mine.id).content


def test_a_file_removed_from_the_folder_forgets_the_memory_restorably(two, synced, home):
    a, b = two
    in_folder(synced, a.id).unlink()

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.FORGET
    assert not NodeRow.objects.filter(uid=a.id).exists()
    assert [p.name for p in (home / "memory" / "deleted").glob(f"*_{a.id[:8]}.md")] != []
    assert tree(synced) == store_tree(home)
    assert steps(folder_sync(path=synced)) == {b.id: SyncStep.IN_STEP}


def test_a_memory_forgotten_in_the_store_leaves_the_folder(two, synced, home):
    a, b = two
    node_forget(ref=a.id)

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.REMOVE
    assert tree(synced) == store_tree(home)
    assert list(tree(synced)) == [in_folder(synced, b.id).name]


def test_changed_on_both_sides_keeps_the_stores_version_and_the_folders_in_conflicts(two, synced, home):
    a, _ = two
    node_update(ref=a.id, patch=NodePatch(content="The billing service uses PostgreSQL 18 for invoices"))
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")
    mine = in_folder(synced, a.id).read_bytes()

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.CONFLICT
    assert (report.clean, [i.node_id for i in report.conflicts]) == (False, [a.id])
    assert tree(synced) == store_tree(home)
    assert "PostgreSQL 18" in node_get(store=runtime.store(), ref=a.id).content
    assert list(tree(synced, "conflicts").values()) == [mine]
    assert list(tree(home / "memory", "conflicts").values()) == [mine]
    assert len(report.kept) == 2
    assert folder_sync(path=synced).clean  # converged: the next sync has nothing to do


def test_removed_from_the_folder_but_changed_in_the_store_is_written_back(two, synced, home):
    a, _ = two
    in_folder(synced, a.id).unlink()
    node_update(ref=a.id, patch=NodePatch(content="The billing service uses PostgreSQL 18 for invoices"))

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.KEEP
    assert NodeRow.objects.filter(uid=a.id).exists()
    assert tree(synced) == store_tree(home)


def test_forgotten_in_the_store_but_changed_in_the_folder_is_restored_with_the_folders_version(two, synced, home):
    a, _ = two
    node_forget(ref=a.id)
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")

    report = folder_sync(path=synced)

    assert steps(report)[a.id] == SyncStep.RESTORE
    assert "PostgreSQL 17" in NodeRow.objects.get(uid=a.id).content
    assert tree(synced) == store_tree(home)


def test_the_self_node_removed_from_the_folder_is_written_back(two, home, tmp_path):
    me = self_ensure(name="Dana")
    root = tmp_path / "checkout"
    folder_sync(path=root)
    in_folder(root, me.id).unlink()

    report = folder_sync(path=root)

    assert steps(report)[me.id] == SyncStep.KEEP
    assert tree(root) == store_tree(home)


def test_a_second_self_node_from_another_store_is_left_out(two, home, tmp_path):
    self_ensure(name="Dana")
    root = tmp_path / "laptop-checkout"
    now = utcnow()
    other = Node(id=new_node_id(), type="person", tier="core", content="Robin: the person these memories belong to.",
                 created=now, updated=now, last_accessed=now, source="system:self", tags=("self", "identity"))
    (root / "nodes").mkdir(parents=True)
    (root / "nodes" / f"person_robin_{other.short_id}.md").write_text(render(other), encoding="utf-8")

    report = folder_sync(path=root)

    assert steps(report)[other.id] == SyncStep.HELD
    assert not NodeRow.objects.filter(uid=other.id).exists()
    assert not report.clean


def test_a_malformed_file_is_reported_left_untouched_and_its_memory_not_forgotten(two, synced, home):
    a, _ = two
    path = in_folder(synced, a.id)
    path.write_bytes(b"---\ntitle: [unclosed\n---\nhalf edited\n")

    report = folder_sync(path=synced)

    assert report.malformed[0][0] == f"nodes/{path.name}"
    assert steps(report)[a.id] == SyncStep.HELD
    assert path.read_bytes() == b"---\ntitle: [unclosed\n---\nhalf edited\n"
    assert NodeRow.objects.filter(uid=a.id).exists()
    assert not report.clean


@pytest.mark.parametrize(("line", "reason"), [
    ("access_count: 99999999999", "an access_count above 2147483647"),
    ("tags: [" + "t" * 65 + "]", "a tag longer than 64 characters"),
])
def test_a_file_the_store_would_read_as_malformed_is_left_out_of_it(two, synced, home, line, reason):
    # session 22 (review8): such a file parsed, so the sync put it into the store, which then read it as malformed:
    # the memory left the index (on PostgreSQL, of every host) until someone mended the file
    a, _ = two
    path = in_folder(synced, a.id)
    head, _, body = path.read_text().partition("\n---\n")
    key = line.split(":")[0]
    path.write_text("\n".join(x for x in head.split("\n") if not x.startswith(key + ":")) + f"\n{line}\n---\n" + body)
    before, held = store_tree(home), path.read_bytes()

    report = folder_sync(path=synced)

    assert report.malformed == [(f"nodes/{path.name}", reason)]
    assert steps(report)[a.id] == SyncStep.HELD
    assert (store_tree(home), path.read_bytes()) == (before, held)
    assert NodeRow.objects.filter(uid=a.id).exists()


def test_a_dry_run_writes_nothing_on_either_side(two, synced, mem, home):
    a, _ = two
    mem("The staging database listens on port 5433", auto_link=False)
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")
    new_file(synced, "The on-call rotation changes every Monday at noon")
    before = (tree(synced), store_tree(home), (synced / ".ormah-sync").read_bytes(), snapshot())

    report = folder_sync(path=synced, dry_run=True)

    assert sorted(i.step for i in report.changes) == [SyncStep.TO_FOLDER, SyncStep.TO_STORE, SyncStep.TO_STORE]
    assert (tree(synced), store_tree(home), (synced / ".ormah-sync").read_bytes(), snapshot()) == before


def test_a_state_written_for_another_store_deletes_nothing(two, synced, home):
    a, b = two
    state = synced / ".ormah-sync"
    state.write_text(state.read_text().replace('"store": "', '"store": "elsewhere-', 1))
    in_folder(synced, a.id).unlink()

    report = folder_sync(path=synced)

    assert "another store" in report.notice
    assert steps(report) == {a.id: SyncStep.TO_FOLDER, b.id: SyncStep.IN_STEP}
    assert NodeRow.objects.filter(uid=a.id).exists()


def test_a_memory_the_store_forgot_leaves_a_never_synced_folder_kept_when_it_differs(two, home, tmp_path):
    a, b = two
    root = tmp_path / "old-checkout"
    folder_sync(path=root)
    (root / ".ormah-sync").unlink()
    node_forget(ref=a.id)
    node_forget(ref=b.id)
    edit(in_folder(root, b.id), "Tuesdays", "Wednesdays")
    changed, mine = in_folder(root, b.id), in_folder(root, b.id).read_bytes()

    report = folder_sync(path=root)

    assert steps(report) == {a.id: SyncStep.DROP, b.id: SyncStep.DROP}
    assert tree(root) == {}
    assert [(n.split(".")[0], data) for n, data in tree(root, "conflicts").items()] == [(changed.stem, mine)]


def test_the_index_after_syncs_equals_a_rebuild_from_the_files(two, synced, mem, home):
    a, b = two
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")
    in_folder(synced, b.id).unlink()
    new_file(synced, "The on-call rotation changes every Monday at noon")
    folder_sync(path=synced)
    live = snapshot()

    index_sync(full=True, verify=True)

    assert snapshot() == live


def test_the_stores_own_memory_folder_is_refused(home, db):
    with pytest.raises(ValidationFailed, match="the store's own memory folder"):
        folder_sync(path=home / "memory")


def test_an_unreadable_state_file_is_refused_before_anything_is_written(two, synced, home):
    (synced / ".ormah-sync").write_text("garbage\n")
    before = (tree(synced), store_tree(home))
    with pytest.raises(ValidationFailed, match="Remove it to sync as the first time"):
        folder_sync(path=synced)
    assert (tree(synced), store_tree(home)) == before


@postgres_only
def test_on_postgresql_a_synced_edit_is_in_the_documents_store_and_reaches_another_host(two, synced, home, settings,
                                                                                       tmp_path):
    from memory.docstore.models import DocumentRow

    a, _ = two
    edit(in_folder(synced, a.id), "PostgreSQL 16", "PostgreSQL 17")
    folder_sync(path=synced)
    rel = f"nodes/{in_folder(synced, a.id).name}"
    assert bytes(DocumentRow.objects.get(path=rel).body) == in_folder(synced, a.id).read_bytes()

    other = tmp_path / "host-b"  # another host: its own empty home on the same database
    settings.ORMAH = {**settings.ORMAH, "HOME": other, "MEMORY_DIR": other / "memory", "TOKEN_FILE": other / "token"}
    report = folder_sync(path=tmp_path / "checkout-b")

    assert sorted(steps(report).values()) == [SyncStep.TO_FOLDER, SyncStep.TO_FOLDER]
    assert tree(tmp_path / "checkout-b") == tree(synced)
