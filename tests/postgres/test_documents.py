"""The documents store on PostgreSQL: each file's bytes and versions in the database, written with the index rows,
the canonical store several hosts share (memory/documents.py; skipped on SQLite, where the folder is the truth)."""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest
from django.db import connection

from memory import runtime
from memory.docstore.models import DocumentRow, DocumentVersionRow
from memory.domain.enums import EdgeType
from memory.domain.requests import NodePatch
from memory.models import NodeRow
from memory.selectors import node_get
from memory.services import edge_create, index_sync, memory_export, memory_import, node_forget, node_update
from memory.writes import write_unit
from tests.memory.test_rebuild_invariant import snapshot
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]
HOST = str(Path(__file__).resolve().parent / "host.py")


def _stored() -> dict[str, bytes]:
    return {r.path: bytes(r.body) for r in DocumentRow.objects.all()}


def _folder(root: Path) -> dict[str, bytes]:
    return {f"{p.parent.name}/{p.name}": p.read_bytes()
            for folder in ("nodes", "deleted") for p in sorted((root / folder).glob("*.md"))}


def _move_to(settings, home: Path) -> Path:
    """Make this process another host: a new, empty ORMAH_HOME on the same database."""
    settings.ORMAH = {**settings.ORMAH, "HOME": home, "MEMORY_DIR": home / "memory", "TOKEN_FILE": home / "token"}
    return home / "memory"


def test_a_write_stores_the_file_bytes_and_each_version(mem, home):
    node = mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    node_update(ref=node.id, patch=NodePatch(content="The billing service uses PostgreSQL 17 for invoices"))
    path = runtime.store().path_for(node.id)
    rel = f"nodes/{path.name}"

    row = DocumentRow.objects.get(path=rel)
    assert (bytes(row.body), row.version, row.node_id) == (path.read_bytes(), 2, node.id)
    assert list(DocumentVersionRow.objects.filter(path=rel).values_list("version", flat=True)) == [1, 2]


def test_a_forget_moves_the_document_to_deleted(mem, home):
    node = mem("A memory that will be forgotten soon enough", auto_link=False)
    name = runtime.store().path_for(node.id).name

    node_forget(ref=node.id)

    assert _stored() == {f"deleted/{name}": (home / "memory" / "deleted" / name).read_bytes()}
    assert DocumentVersionRow.objects.filter(path=f"nodes/{name}").last().sha256 == ""


def test_a_failed_unit_leaves_the_stored_documents_as_they_were(mem, home):
    node = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    before = _stored()

    with pytest.raises(RuntimeError), write_unit() as unit:
        current, stored = unit.read(node.id)
        unit.save(replace(current, content="Deploys happen on Fridays"), expected=stored)
        unit.flush()  # the new version is in the store ...
        raise RuntimeError("a later step fails")  # ... and the rollback takes it back

    assert _stored() == before == _folder(home / "memory")


def test_hand_edits_in_the_folder_reach_the_store_at_the_next_sync(mem, home):
    kept = mem("Deploys happen on Tuesdays after the release checklist", auto_link=False)
    gone = mem("The billing service uses PostgreSQL 16 for invoices", auto_link=False)
    store = runtime.store()
    path = store.path_for(kept.id)
    path.write_text(path.read_text().replace("Tuesdays", "Thursdays"))
    store.path_for(gone.id).unlink()

    index_sync()

    assert _stored() == _folder(home / "memory")
    assert node_get(store=store, ref=kept.id).content.startswith("Deploys happen on Thursdays")


def test_a_rebuild_on_a_new_host_from_the_stored_documents_equals_the_live_index(mem, home, settings, tmp_path):
    a = mem("Dana prefers tabs over spaces in every editor", type="preference")
    b = mem("The billing service uses PostgreSQL 16 for invoices", space="billing", tags=["db"])
    c = mem("Deploys happen on Tuesdays after the release checklist", type="procedure")
    edge_create(source_ref=c.id, target_ref=b.id, edge=EdgeType.DEPENDS_ON, weight=0.8, reason="deploys touch db")
    names = [runtime.store().path_for(n.id).name for n in (a, b, c)]
    node_forget(ref=a.id)
    path_c = runtime.store().path_for(c.id)
    path_c.write_text(path_c.read_text().replace("Tuesdays", "Thursdays"))  # a hand edit on the first host
    index_sync()
    live, first = snapshot(), _folder(home / "memory")

    folder = _move_to(settings, tmp_path / "second-host")
    index_sync(full=True, verify=True)  # `ormah rebuild --verify` on a host whose folder is empty

    assert snapshot() == live
    assert _folder(folder) == first == _stored()
    assert sorted(first) == [f"deleted/{names[0]}", f"nodes/{names[1]}", f"nodes/{names[2]}"]


def test_an_export_holds_the_stored_documents_and_an_import_fills_the_store(mem, home, settings, tmp_path):
    mem("Dana prefers tabs over spaces in every editor", type="preference", auto_link=False)
    gone = mem("A memory that will be forgotten soon enough", auto_link=False)
    node_forget(ref=gone.id)
    stored = _stored()
    archive = tmp_path / "team.tar.gz"

    memory_export(path=archive)
    with tarfile.open(archive) as tar:
        exported = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.name != "manifest.json"}
    for model in (NodeRow, DocumentRow, DocumentVersionRow):  # an empty team server
        model.objects.all().delete()
    folder = _move_to(settings, tmp_path / "server")
    report = memory_import(path=archive)

    assert exported == stored
    assert (len(report.imported), len(report.forgotten)) == (1, 1)
    assert _stored() == stored == _folder(folder)


def _database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@/{s['NAME']}?host={s['HOST']}&port={s['PORT']}"


def _host(home: Path, *args: str) -> str:
    """Run tests/postgres/host.py as an app host on `home` against this test's database; returns its output."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR")}
    env.update(ORMAH_HOME=str(home), ORMAH_DATABASE_URL=_database_url(), ORMAH_LOG_LEVEL="WARNING",
               ORMAH_API_TOKEN="", DJANGO_SETTINGS_MODULE="ormah_site.settings")
    done = subprocess.run([sys.executable, HOST, *args], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_two_hosts_on_one_database_see_each_others_writes(tmp_path):
    host_a, host_b = tmp_path / "a", tmp_path / "b"
    text = "The quarterly invoices are archived in the cold storage bucket"

    node_id = _host(host_a, "remember", text)
    shown = _host(host_b, "show", node_id)
    found = _host(host_b, "recall", "quarterly invoices cold storage").splitlines()
    _host(host_b, "rebuild")
    folder_a, folder_b = _folder(host_a / "memory"), _folder(host_b / "memory")
    reply = _host(host_b, "remember", "Host B keeps the release notes in the wiki")

    assert (shown, found[:1]) == (text, [node_id])
    assert len(folder_a) == 1 and folder_b == folder_a  # A's file, byte for byte, in B's folder
    assert _host(host_a, "show", reply) == "Host B keeps the release notes in the wiki"
