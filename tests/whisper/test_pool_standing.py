"""A recall hit sharing no word with the prompt no longer passes the overlap filter on its standing (session 19's
pass, removed by session 21's audit: docs/whisper.md, "Rules audited on fresh batches (session 21)"); the spread of
the prompt's cosines over every memory in scope is still read by bench/whisper_pool_standout.py."""

from __future__ import annotations

from datetime import timedelta

import numpy as np
import pytest

from memory import runtime
from memory.domain.requests import NodePatch
from memory.search import matrix
from memory.search.semantic import cosine_map
from memory.services import node_update
from whisper import selectors
from whisper.stages.scoring import topical_overlap

from .conftest import NOW, cand, fake_deps, intent, make_run, unit

PROMPT = "which volcano did we walk up on that italian island"


def _pool():
    # "a" shares no word with the prompt and is the call's nearest hit; "b" shares "island".
    return [cand("a", title="Stromboli trip", content="Hiked the crater at night in 2019 with Jonas", cosine=0.43,
                 probability=0.08),
            cand("b", title="Texel", content="Cycled around the island of Texel", cosine=0.30, probability=0.06)]


def _run(pool):
    return make_run(PROMPT, pool=pool, intent=intent(), query=PROMPT, query_vec=unit(1.0), prompt_vec=unit(1.0))


def test_the_nearest_hit_sharing_no_word_is_dropped_however_far_it_stands_out(conf):
    # Session 19's standing pass (1471c5d) let it through at z >= 5.0 (here 5.5); removed in session 21's audit.
    run = _run(_pool())
    deps = fake_deps(spread=lambda vec: (0.10, 0.06))  # z of "a" = (0.43 - 0.10) / 0.06 = 5.5
    assert topical_overlap(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["b"]
    assert run.candidates[0].stage == "no_overlap"


@pytest.mark.django_db(transaction=True)
def test_the_spread_is_over_every_live_core_and_working_memory(mem):
    matrix.reset()
    texts = ["Hiked the Stromboli crater at night", "Cycled around Texel", "The boiler was serviced in May",
             "Sourdough starter fed on Sundays", "Dentist check-up every six months", "Moved from Ghent in 2021"]
    live = [mem(t, auto_link=False) for t in texts]
    archived = mem("Old note about volcano tours", auto_link=False, tier="archival")
    outdated = mem("Planned a volcano trip to Etna", auto_link=False)
    node_update(ref=outdated.id, patch=NodePatch(valid_until=NOW - timedelta(days=1)))
    vec = runtime.embedder().embed_query(PROMPT)
    from memory.models import NodeRow

    rows = dict(NodeRow.objects.values_list("uid", "id"))
    cosines = cosine_map(vec, [rows[n.id] for n in live])
    expected = np.array(list(cosines.values()))
    mean, spread = selectors.cosine_spread(query_vec=vec, now=NOW)
    assert len(cosines) == len(live)
    assert mean == pytest.approx(float(expected.mean()), abs=1e-5)
    assert spread == pytest.approx(float(expected.std()), abs=1e-5)
    everything = matrix.spread(vec)
    assert everything[2] == len(texts) + 2  # no filter: the archived and the outdated memory count too
    assert {archived.id, outdated.id} <= set(rows)
