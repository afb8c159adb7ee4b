"""Switching the embedding model re-embeds every memory; unchanged text is never embedded twice."""

from memory import runtime
from memory.index import sync
from memory.models import NodeRow
from memory.search import vectors


def test_switching_model_reembeds_everything(mem, settings):
    for text in ("alpha memory", "beta memory", "gamma memory"):
        mem(text, auto_link=False)
    before = {r: b for r, b in vectors.all_vectors()}
    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}
    seen = []
    report = sync(runtime.store(), embedder=runtime.embedder(), progress=lambda d, t: seen.append((d, t)))
    assert report.reembedded_for_model == "test/hash-embedder"
    assert report.embedded == 3
    assert seen[-1] == (3, 3)
    after = {r: b for r, b in vectors.all_vectors()}
    assert set(after) == set(before) and all(after[r] != before[r] for r in after)
    assert not NodeRow.objects.filter(embed_hash="").exists()


def test_unchanged_sync_embeds_nothing(mem):
    mem("delta memory", auto_link=False)
    report = sync(runtime.store(), embedder=runtime.embedder())
    assert (report.embedded, report.indexed, report.unchanged) == (0, 0, 1)
