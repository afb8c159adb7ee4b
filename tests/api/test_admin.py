"""Admin: rebuild from the files, and health (extensions, model, counts, drift)."""

from __future__ import annotations

from memory import runtime
from memory.models import NodeRow
from tests.postgres import ON_POSTGRES


def test_rebuild_keeps_the_rows_of_unchanged_files(api, mem):
    mem("One memory", auto_link=False)
    mem("Another memory", auto_link=False)
    response = api.post("/api/admin/rebuild")
    assert response.status_code == 200
    assert response.json() == {"status": "rebuilt", "report": {
        "indexed": 0, "unchanged": 2, "removed": 0, "embedded": 0, "malformed": [], "reembedded_for_model": None}}


def test_rebuild_reports_malformed_files_and_leaves_them(api, mem):
    mem("One memory", auto_link=False)
    bad = runtime.store().nodes_dir / "broken.md"
    bad.write_text("---\nid: [unclosed\n---\nbody\n")
    report = api.post("/api/admin/rebuild").json()["report"]
    assert [m["path"] for m in report["malformed"]] == [str(bad)]
    assert bad.exists()


def test_health_when_everything_agrees(api, mem):
    mem("A fact", type="fact", auto_link=False)
    mem("A decision", type="decision", tier="core", auto_link=False)
    body = api.get("/api/admin/health").json()
    assert body["status"] == "ok"
    assert body["extensions"]["fts5"] is True
    if ON_POSTGRES:
        assert (body["extensions"]["vec"], body["extensions"]["sqlite"]) == ("0.8.6", None)
    else:
        assert body["extensions"]["vec"] == "v0.1.9"
        assert body["extensions"]["sqlite"].startswith("3.")
    assert body["model"] == {"id": "ormah/all-MiniLM-L6-v2-int8@8199be6f", "dim": 384, "loaded": True,
                             "index_model": "ormah/all-MiniLM-L6-v2-int8@8199be6f", "error": None}
    assert body["counts"] == {"nodes": 2, "by_tier": {"core": 1, "working": 1},
                              "by_type": {"decision": 1, "fact": 1}, "edges": 0}
    assert body["drift"] == {"clean": True, "not_indexed": [], "missing_files": [], "changed": [], "malformed": []}


def test_health_reports_drift_and_malformed_files(api, mem):
    gone = mem("A memory whose file is deleted by hand", auto_link=False)
    mem("A memory that stays", auto_link=False)
    path = runtime.store().path_for(gone.id)
    rel = str(path.relative_to(runtime.store().root))
    path.unlink()
    (runtime.store().nodes_dir / "broken.md").write_text("no front matter at all\n")
    body = api.get("/api/admin/health").json()
    assert body["status"] == "degraded"
    assert body["drift"]["missing_files"] == [rel]
    assert body["drift"]["not_indexed"] == ["nodes/broken.md"]
    assert [m["path"] for m in body["drift"]["malformed"]] == ["nodes/broken.md"]
    assert body["drift"]["clean"] is False
    assert NodeRow.objects.count() == 2


def test_health_reports_an_embedder_that_does_not_load(api, settings):
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.NoSuchEmbedder"}
    response = api.get("/api/admin/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["model"] == {"id": "ormah/all-MiniLM-L6-v2-int8", "dim": None, "loaded": False, "index_model": None,
                             "error": "AttributeError: module 'memory.embeddings' has no attribute 'NoSuchEmbedder'"}
