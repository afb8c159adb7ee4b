"""Merges keep the keeper's id, remap edges and soft-delete the other; undo gives back every byte and row."""

from __future__ import annotations

import pytest

from memory import files, runtime
from memory.domain.enums import EdgeType, Tier
from memory.errors import Conflict, ProtectedNode
from memory.models import AuditRow, MergeHistoryRow, NodeRow
from memory.services import edge_create, merge_undo, node_merge, self_ensure
from tests.maintenance.support import edges_of, files_snapshot, index_snapshot


@pytest.fixture
def scene(mem):
    me = self_ensure(name="Robin")
    keep = mem("Ormah stores every memory as a markdown file", title="Markdown is the truth", tags=["storage"],
               auto_link=False)
    gone = mem("Ormah keeps memories in markdown files", tags=["files"], about_self=True, auto_link=False)
    other = mem("The index is rebuilt from the files", auto_link=False)
    pointer = mem("Backups copy the node folder", auto_link=False)
    edge_create(source_ref=gone.id, target_ref=other.id, edge=EdgeType.SUPPORTS, weight=0.8, reason="same design")
    edge_create(source_ref=pointer.id, target_ref=gone.id, edge=EdgeType.DEPENDS_ON, weight=0.6)
    edge_create(source_ref=keep.id, target_ref=gone.id, edge=EdgeType.RELATED_TO, weight=0.7)
    return me, keep, gone, other, pointer


def test_merge_keeps_the_keepers_id_and_moves_edges(scene, home):
    me, keep, gone, other, pointer = scene
    result = node_merge(keep_ref=keep.id, discard_ref=gone.id, merged_content="Ormah stores memories as markdown files")
    assert result.kept.id == keep.id
    row = NodeRow.objects.get(uid=keep.id)
    assert (row.content, row.tags_text) == ("Ormah stores memories as markdown files", "storage files about_self")
    assert not NodeRow.objects.filter(uid=gone.id).exists()
    assert runtime.store().path_for(gone.id) is None
    assert [p.name[-11:] for p in (home / "memory" / "deleted").glob("*.md")] == [f"{gone.id[:8]}.md"]
    assert edges_of(keep.id) == sorted([
        (me.id, keep.id, "defines", 1.0), (keep.id, other.id, "supports", 0.8),
        (pointer.id, keep.id, "depends_on", 0.6),
    ])
    assert sorted(AuditRow.objects.filter(operation="merge").values_list("node_uid", flat=True)) == sorted(
        [keep.id, gone.id])


def test_merge_then_undo_is_byte_identical_for_files_and_index(scene, home):
    _, keep, gone, _, _ = scene
    files_before, index_before = files_snapshot(home), index_snapshot()
    result = node_merge(keep_ref=keep.id, discard_ref=gone.id, merged_title="Markdown files are the memory",
                        merged_content="Ormah stores memories as markdown files, one per memory")
    assert files_snapshot(home) != files_before
    merge_undo(ref=result.merge_id[:8])
    assert files_snapshot(home) == files_before
    assert index_snapshot() == index_before
    assert MergeHistoryRow.objects.get(merge_id=result.merge_id).undone_at is not None


def test_undo_twice_is_refused(scene):
    _, keep, gone, _, _ = scene
    result = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    merge_undo(ref=result.merge_id)
    with pytest.raises(Conflict):
        merge_undo(ref=result.merge_id)


def test_the_self_node_cannot_be_merged(scene):
    me, keep, _, _, _ = scene
    with pytest.raises(ProtectedNode):
        node_merge(keep_ref=keep.id, discard_ref=me.id)


def test_merge_takes_the_higher_tier(mem):
    a = mem("Deploys go out on Tuesdays", tier=Tier.ARCHIVAL, auto_link=False)
    b = mem("Deploys go out on Tuesday", tier=Tier.CORE, auto_link=False)
    assert node_merge(keep_ref=a.id, discard_ref=b.id).kept.tier == Tier.CORE


def test_a_neighbour_edited_on_disk_mid_merge_rolls_the_merge_back(scene, home, monkeypatch):
    _, keep, gone, _, pointer = scene
    files_before = files_snapshot(home)
    real_write = files.write_node

    def edited_meanwhile(store, node, **kw):
        if node.id == pointer.id:
            path = store.path_for(node.id)
            path.write_text(path.read_text() + "\nedited by hand")
        return real_write(store, node, **kw)

    monkeypatch.setattr(files, "write_node", edited_meanwhile)
    with pytest.raises(Conflict):
        node_merge(keep_ref=keep.id, discard_ref=gone.id, merged_content="rewritten")
    after = files_snapshot(home)
    conflict_copies = [k for k in after if k.startswith("conflicts/")]
    assert len(conflict_copies) == 1
    pointer_file = next(k for k in files_before if pointer.id[:8] in k)
    assert after[pointer_file].endswith(b"\nedited by hand")
    assert {k: v for k, v in after.items() if k not in conflict_copies and k != pointer_file} == {
        k: v for k, v in files_before.items() if k != pointer_file}
    assert not MergeHistoryRow.objects.exists() and NodeRow.objects.filter(uid=gone.id).exists()


def test_the_merge_list_shows_done_merges_not_pending_ones(scene):
    from maintenance.selectors import merges_list

    _, keep, gone, _, _ = scene
    done = node_merge(keep_ref=keep.id, discard_ref=gone.id)
    in_flight = MergeHistoryRow.objects.get(merge_id=done.merge_id)
    in_flight.pk, in_flight.merge_id, in_flight.pending = None, "f" * 32, True  # as a kill mid-merge leaves one
    in_flight.save(force_insert=True)
    assert [m.merge_id for m in merges_list()] == [done.merge_id]


def test_an_ambiguous_merge_prefix_is_409_with_the_candidates_as_every_id(scene, mem, api):
    """docs/api.md: an ambiguous id prefix (memories, proposals, merges) answers 409 `ambiguous_ref` listing the
    candidates; a merge's answered 422 "Merge prefix ... is ambiguous" with none."""
    _, keep, gone, other, pointer = scene
    first = node_merge(keep_ref=keep.id, discard_ref=gone.id).merge_id
    second = node_merge(keep_ref=other.id, discard_ref=pointer.id).merge_id
    twin = first[:9] + ("0" if first[9] != "0" else "1") + first[10:]  # ids drawn at random rarely share 9
    MergeHistoryRow.objects.filter(merge_id=second).update(merge_id=twin)
    response = api.post(f"/api/agent/merges/{first[:8]}/undo")
    assert (response.status_code, response.json()["error"]) == (409, "ambiguous_ref")
    assert sorted(response.json()["details"]["candidates"]) == sorted([first, twin])
    assert api.post(f"/api/agent/merges/{first}/undo").status_code == 200  # the full id still undoes it
