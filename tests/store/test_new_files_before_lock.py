"""A remember writes and fsyncs its memory's new file BEFORE it takes the write lock (nameless, O_TMPFILE), so under
the lock the file only gets its name (memory.services.nodes.nodes_prepare, memory.files_new.prepare_new_nodes): the
hold keeps the evidence append, the folder's fsync and the index. A forecast that no longer holds under the lock is
written again from what the lock computes; a process killed before the lock leaves no file and no memory."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from memory import locking, nameless, runtime
from memory.domain.markdown import parse
from memory.domain.requests import NodeCreate
from memory.models import NodeRow
from memory.services import node_remember
from memory.services.links import links_ahead
from memory.services.nodes import create_in, nodes_embed_ahead, nodes_prepare
from memory.domain.node import utcnow
from memory.writes import write_unit

pytestmark = pytest.mark.skipif(not nameless.available(), reason="nameless files (O_TMPFILE) are Linux only")
ROOT = Path(__file__).resolve().parents[2]


def _fsyncs(monkeypatch) -> list[tuple[str, bool]]:
    """Record every os.fsync: the path its descriptor names and whether this thread held the write lock."""
    seen: list[tuple[str, bool]] = []
    real = os.fsync

    def fsync(fd):
        seen.append((os.readlink(f"/proc/self/fd/{fd}"), locking.held()))
        return real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return seen


def test_a_remember_fsyncs_its_new_file_before_the_write_lock(home, db, monkeypatch):
    node_remember(request=NodeCreate(content="The kiln fires at dawn on Saturdays"))  # warm: folders, host id
    nodes_dir = str(runtime.store().nodes_dir)
    seen = _fsyncs(monkeypatch)
    result = node_remember(request=NodeCreate(content="Glaze batches dry for a whole day"), session_id="s1")
    in_nodes = [(path, held) for path, held in seen if path.startswith(nodes_dir + "/")]
    assert in_nodes, "no file of nodes/ was fsynced: the test proves nothing"
    assert [held for _, held in in_nodes] == [False]  # the memory's file, before the lock; none under it
    assert (nodes_dir, True) in seen  # the folder: under the lock, once the name is given
    assert any(held and "evidence" in path for path, held in seen)  # the evidence append stays under the lock
    assert NodeRow.objects.filter(uid=result.node.id).count() == 1
    assert parse(runtime.store().path_for(result.node.id).read_text()).content == "Glaze batches dry for a whole day"


def test_a_forecast_that_no_longer_holds_is_written_from_what_the_lock_computes(home, db):
    text = "The community garden's tomato beds are watered every evening at seven"
    now = utcnow()
    request = NodeCreate(content=text)
    nodes_embed_ahead(requests=[request], now=now)
    ahead = links_ahead(requests=[request], now=now)
    ids, prepared = nodes_prepare(requests=[request], nows=[now], ahead=ahead)
    assert prepared is not None and list(prepared.files) == ids
    twin = node_remember(request=NodeCreate(content=text + "."), auto_link=False).node  # lands before the lock
    try:
        with write_unit() as unit:
            result = create_in(unit, requests=[request], nows=[now], ahead=ahead, ids=ids, prepared=prepared)[0]
    finally:
        prepared.close()
    assert result.node.id == ids[0]
    assert [link.target_id for link in result.auto_links] == [twin.id]  # the forecast had no such link
    on_disk = parse(runtime.store().path_for(ids[0]).read_text())
    assert [c.target for c in on_disk.connections] == [twin.id]  # the file holds what the lock computed
    assert NodeRow.objects.filter(uid=ids[0]).count() == 1


def test_a_remember_killed_before_the_write_lock_leaves_no_file_and_no_memory(tmp_path):
    """Killed after its file was written and fsynced (nameless) and before the lock: nothing named is left in nodes/
    (no memory, no temp file), and a restart's rebuild indexes no memory nobody acknowledged."""
    env = {**os.environ, "ORMAH_HOME": str(tmp_path), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_EMBEDDER": "memory.embeddings.HashEmbedder"}
    env.pop("ORMAH_DB_PATH", None)
    script = textwrap.dedent("""
        import os, sys
        import django
        django.setup()
        from django.core.management import call_command
        import memory.writes as writes
        from memory.domain.requests import NodeCreate
        from memory.services import node_remember, index_sync
        from memory.models import NodeRow
        if sys.argv[1] == "crash":
            call_command("migrate", interactive=False, verbosity=0)
            print("ACK " + node_remember(request=NodeCreate(content="Acknowledged: clay arrives on Tuesdays")).node.id,
                  flush=True)
            real_prepare, real_lock = writes.prepare_new, writes.write_lock
            def prepare(nodes, conf=None):
                got = real_prepare(nodes, conf)
                print("PREPARED %d" % len(got.files), flush=True)
                return got
            def lock(lock_file):
                print("KILLED", flush=True)
                os._exit(9)
            import memory.services.nodes as nodes
            nodes.prepare_new = prepare
            writes.write_lock = lock
            node_remember(request=NodeCreate(content="Never acknowledged: the kiln is being rebuilt"))
        else:
            index_sync()
            print("ROWS " + " ".join(sorted(NodeRow.objects.values_list("uid", flat=True))), flush=True)
    """)
    crashed = subprocess.run([sys.executable, "-c", script, "crash"], env=env, cwd=ROOT, capture_output=True,
                             text=True, timeout=300)
    assert crashed.returncode == 9, crashed.stderr[-2000:]
    lines = crashed.stdout.splitlines()
    acked = lines[0].split()[1]
    assert lines[1:] == ["PREPARED 1", "KILLED"]  # the file was written before the kill: the test means something
    nodes_dir = tmp_path / "memory" / "nodes"
    if not nodes_dir.is_dir():
        nodes_dir = next(p for p in tmp_path.rglob("nodes") if p.is_dir())
    named = sorted(p.name for p in nodes_dir.iterdir())
    assert len(named) == 1 and acked[:8] in named[0]  # the acknowledged memory alone: no file, no temp file
    recovered = subprocess.run([sys.executable, "-c", script, "recover"], env=env, cwd=ROOT, capture_output=True,
                               text=True, timeout=300)
    assert recovered.returncode == 0, recovered.stderr[-2000:]
    assert recovered.stdout.splitlines()[-1] == f"ROWS {acked}"


def test_a_prepared_file_named_by_a_unit_that_rolled_back_is_written_again_by_the_retry(home, db):
    """A group commit whose shared unit fails writes each call alone with the same prepared files: the first unit
    named a prepared file and its rollback removed the name, so the retry cannot name that file again (its link
    count went back to 0) and writes the memory's file afresh under the lock."""
    now = utcnow()
    request = NodeCreate(content="The allotment's shed key hangs behind the water butt")
    ids, prepared = nodes_prepare(requests=[request], nows=[now], auto_link=False)
    assert prepared is not None and list(prepared.files) == ids
    try:
        with pytest.raises(RuntimeError, match="the group failed"):
            with write_unit() as unit:
                create_in(unit, requests=[request], nows=[now], auto_link=False, ids=ids, prepared=prepared)
                assert runtime.store().path_for(ids[0]) is not None  # named by this unit
                raise RuntimeError("the group failed")
        assert runtime.store().path_for(ids[0]) is None  # the rollback removed the name
        with write_unit() as unit:
            create_in(unit, requests=[request], nows=[now], auto_link=False, ids=ids, prepared=prepared)
    finally:
        prepared.close()
    path = runtime.store().path_for(ids[0])
    assert parse(path.read_text()).content == request.content
    assert NodeRow.objects.filter(uid=ids[0]).count() == 1
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temp file left


def test_remembers_leave_no_descriptor_open(home, db):
    """Each remember's prepared file is closed once its write is done (a leak here fails the test: checked)."""
    node_remember(request=NodeCreate(content="The first memory opens the folders and the database"))
    before = len(os.listdir("/proc/self/fd"))
    for i in range(12):
        node_remember(request=NodeCreate(content=f"Memory {i} about the pottery club's kiln rota"))
    assert len(os.listdir("/proc/self/fd")) <= before
