"""`ormah doctor` says when the index's vectors are another model's than the one configured: ORMAH_EMBEDDER switched
and no sync since (an in-process command re-embeds nothing, so its recall compared the new model's query with the old
model's vectors while doctor said `model: ok` and `vectors: every memory has one`; session 26, review15)."""

from __future__ import annotations

import io
import json

from django.core.management import call_command

from memory import index


def _doctor(*args: str) -> dict[str, dict]:
    out = io.StringIO()
    try:
        call_command("doctor", "--json", *args, stdout=out)
    except SystemExit:
        pass  # another check may fail in a bare test home; the model row is what these tests read
    return {c["check"]: c for c in json.loads(out.getvalue())["checks"]}


def test_doctor_warns_when_the_index_vectors_are_another_models_until_a_sync(mem, settings):
    mem("The staging database runs PostgreSQL 16", auto_link=False)
    before = index.meta_get(index.META_MODEL)
    assert not _doctor()["model"].get("warning")
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}  # another model id
    row = _doctor()["model"]
    assert row["ok"] and row.get("warning"), row
    assert row["detail"].startswith("test/hash-embedder, dim ") and f"made with {before}" in row["detail"]
    assert "next sync re-embeds every memory" in row["detail"]
    healed = _doctor("--heal")["model"]  # the heal's sync re-embeds with the configured model
    assert healed["ok"] and not healed.get("warning") and index.meta_get(index.META_MODEL) == "test/hash-embedder"


def test_an_empty_index_has_nothing_to_re_embed(home, db, settings):
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}
    index.meta_set(index.META_MODEL, "some/other-model")
    assert not _doctor()["model"].get("warning")
