"""Two hosts of one PostgreSQL store with different embedding models (session 22, review8).

Before: each host's next write or sync found "another" model in the shared index, dropped every vector and passage
and re-embedded the whole store, and the other host did the same back, for as long as both ran. Now the host that
set the model may switch again (as a SQLite home does), another host's write and sync are refused with
EmbeddingModelMismatch and `ormah doctor` fails `model`, and `ormah rebuild` switches the store from any host."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from memory import index
from memory.errors import EmbeddingModelMismatch
from memory.models import NodeRow
from memory.search import vectors
from memory.services import index_sync
from tests.postgres import postgres_only

pytestmark = [postgres_only, pytest.mark.django_db(transaction=True)]

HASH = "memory.embeddings.HashEmbedder"


def _host(settings, home, embedder=None) -> None:
    """Make this process another host: its own ORMAH_HOME (and host id) on the same database."""
    settings.ORMAH = {**settings.ORMAH, "HOME": home, "MEMORY_DIR": home / "memory", "TOKEN_FILE": home / "token",
                      **({"EMBEDDER": embedder} if embedder else {})}


def _vectors() -> dict:
    return dict(vectors.all_vectors())


def _doctor_model() -> dict:
    out = io.StringIO()
    try:
        call_command("doctor", "--json", stdout=out)
    except SystemExit:
        pass
    return {c["check"]: c for c in json.loads(out.getvalue())["checks"]}["model"]


def test_a_host_with_another_model_is_refused_and_leaves_the_vectors(mem, home, settings, tmp_path):
    for text in ("alpha memory about tea", "beta memory about coffee"):
        mem(text, auto_link=False)
    model, before = index.meta_get(index.META_MODEL), _vectors()
    _host(settings, tmp_path / "host-b", HASH)

    with pytest.raises(EmbeddingModelMismatch, match="shared index was built with " + model):
        index_sync()
    with pytest.raises(EmbeddingModelMismatch):
        mem("gamma memory written on host B", auto_link=False)

    assert (index.meta_get(index.META_MODEL), _vectors()) == (model, before)  # before: all dropped, re-embedded
    assert not NodeRow.objects.filter(embed_hash="").exists()
    doctor = _doctor_model()
    assert not doctor["ok"] and "shared index was built with " + model in doctor["detail"]


def test_rebuild_switches_the_store_from_any_host_and_then_the_other_is_refused(mem, home, settings, tmp_path):
    mem("alpha memory about tea", auto_link=False)
    model, default = index.meta_get(index.META_MODEL), settings.ORMAH["EMBEDDER"]
    _host(settings, tmp_path / "host-b", HASH)

    index_sync(full=True)  # `ormah rebuild` on host B

    assert index.meta_get(index.META_MODEL) == "test/hash-embedder"
    assert len(_vectors()) == NodeRow.objects.count()
    _host(settings, home, default)  # host A, still on the old model
    with pytest.raises(EmbeddingModelMismatch, match="shared index was built with test/hash-embedder"):
        index_sync()
    assert index.meta_get(index.META_MODEL) == "test/hash-embedder" != model


def test_the_host_that_set_the_model_may_switch_it_again(mem, settings):
    mem("alpha memory about tea", auto_link=False)
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": HASH}

    report = index_sync()

    assert report.reembedded_for_model == "test/hash-embedder"
