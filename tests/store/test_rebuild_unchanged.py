"""The full rebuild keeps the rows of files whose hash is unchanged (memory/rebuild.py, issue 13 item 6) and still
equals a rebuild that trusts no hash; `verify` rewrites every row and repairs what was damaged behind the files."""

from __future__ import annotations

from memory import runtime
from memory.rebuild import rebuild
from memory.models import NodeRow, NodeTagRow
from tests.memory.test_rebuild_invariant import snapshot


def _rebuild(**kwargs):
    return rebuild(runtime.store(), embedder=runtime.embedder(), **kwargs)


def _memories(mem):
    return [mem("Kettles boil water for tea", tags=["kitchen"], auto_link=False),
            mem("The billing service uses PostgreSQL 16", space="billing", auto_link=False),
            mem("Deploys happen on Tuesdays after the checklist " * 40, type="procedure", auto_link=False)]


def test_a_rebuild_with_nothing_changed_keeps_every_row_and_parses_no_file(mem, home):
    _memories(mem)
    ids, live = dict(NodeRow.objects.values_list("uid", "id")), snapshot()
    report = _rebuild()
    assert (report.indexed, report.unchanged, report.embedded) == (0, 3, 0)
    assert dict(NodeRow.objects.values_list("uid", "id")) == ids
    assert snapshot() == live


def test_a_rebuild_rewrites_a_file_edited_by_hand_and_drops_a_deleted_one(mem, home):
    a, b, c = _memories(mem)
    store = runtime.store()
    path_a = store.path_for(a.id)
    path_a.write_text(path_a.read_text().replace("Kettles boil water", "Kettles boil milk"))
    store.path_for(b.id).unlink()
    report = _rebuild()
    assert (report.indexed, report.unchanged) == (1, 1)
    assert NodeRow.objects.get(uid=a.id).content == "Kettles boil milk for tea"
    assert set(NodeRow.objects.values_list("uid", flat=True)) == {a.id, c.id}
    hashed = snapshot()
    _rebuild(verify=True)
    assert snapshot() == hashed


def test_a_file_touched_without_a_change_is_read_again(mem, home):
    a, _, _ = _memories(mem)
    path = runtime.store().path_for(a.id)
    stat = path.stat()
    path.touch()
    assert path.stat().st_mtime_ns != stat.st_mtime_ns
    report = _rebuild()
    assert (report.indexed, report.unchanged) == (1, 2)
    assert NodeRow.objects.get(uid=a.id).file_mtime_ns == path.stat().st_mtime_ns


def test_verify_rewrites_every_row_and_repairs_rows_damaged_behind_the_files(mem, home):
    a, _, _ = _memories(mem)
    live = snapshot()
    NodeTagRow.objects.filter(node__uid=a.id).delete()
    report = _rebuild(verify=True)
    assert (report.indexed, report.unchanged, report.embedded) == (3, 0, 0)
    assert list(NodeTagRow.objects.filter(node__uid=a.id).values_list("tag", flat=True)) == ["kitchen"]
    assert snapshot() == live


def test_an_index_derived_by_another_format_is_rewritten_whole_by_a_plain_rebuild(mem, home):
    from memory import index

    _memories(mem)
    assert index.meta_get(index.META_FORMAT) == index.INDEX_FORMAT  # a new index knows its format
    NodeTagRow.objects.all().delete()  # what an older derivation could have left different
    index.meta_set(index.META_FORMAT, "0")  # as an index written by an older Ormah says (or says nothing)
    report = _rebuild()
    assert (report.indexed, report.unchanged) == (3, 0)
    assert NodeTagRow.objects.filter(tag="kitchen").count() == 1
    assert index.meta_get(index.META_FORMAT) == index.INDEX_FORMAT
    assert _rebuild().unchanged == 3  # and from then on unchanged files are trusted again
