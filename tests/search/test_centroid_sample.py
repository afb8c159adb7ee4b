"""Centrality's centroid sample is the same in every process for the same store (memory/search/centroid.py).

A store larger than the sample once drew it with ORDER BY random(), so each process summed other memories and
scored centrality a little differently. The sample is now the first memories by uid. The sample size is lowered
to 3 here, so a store of six memories has 20 possible samples and a random draw would miss the expected one.
"""

from __future__ import annotations

import numpy as np

from memory.models import NodeRow
from memory.search import centroid, vectors
from tests.support.stores import SIX_MEMORIES as TEXTS



def test_a_store_larger_than_the_sample_sums_the_memories_first_by_uid(mem, monkeypatch):
    monkeypatch.setattr(centroid, "CENTROID_SAMPLE", 3)
    uids = sorted(mem(text, auto_link=False).id for text in TEXTS)
    first = list(NodeRow.objects.filter(uid__in=uids[:3]).values_list("id", flat=True))
    expected = np.sum(np.stack(list(vectors.get_many(first).values())), axis=0)
    dim = int(expected.shape[0])

    sums = []
    for _ in range(2):  # each time as a fresh process would: nothing cached
        monkeypatch.setattr(centroid, "_centroids", {})
        summed, sampled, _ = centroid.centroid(len(TEXTS), dim)
        sums.append(summed)

    assert sampled == 3
    assert np.allclose(sums[0], expected, rtol=0, atol=1e-6)
    assert sums[0].tobytes() == sums[1].tobytes()
