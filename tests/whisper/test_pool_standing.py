"""A recall hit sharing no word with the prompt passes the overlap filter and the gate on its standing: its cosine's
standard score over the prompt's cosines to every memory in scope (session 19, docs/whisper.md)."""

from __future__ import annotations

import math
from datetime import timedelta

import numpy as np
import pytest

from memory import runtime
from memory.domain.requests import NodePatch
from memory.search import matrix
from memory.search.semantic import cosine_map
from memory.services import node_update
from whisper import selectors
from whisper.stages.gate import injection_gate
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


def test_the_nearest_hit_sharing_no_word_passes_the_filter_and_the_gate_when_it_stands_out(conf):
    pool = _pool()
    run = _run(pool)
    deps = fake_deps(spread=lambda vec: (0.10, 0.06))  # z of "a" = (0.43 - 0.10) / 0.06 = 5.5
    assert topical_overlap(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["a", "b"]
    assert pool[0].standing == 5.5 and pool[1].standing is None
    assert injection_gate(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["a"]  # the logistic gate alone passes neither
    assert (pool[0].gate_score, pool[0].gate_threshold) == (5.5, conf.overlap_z)


@pytest.mark.parametrize("spread", [(0.10, 0.07), None, (0.43, 0.0)])
def test_a_hit_that_does_not_stand_out_enough_is_dropped_as_before(conf, spread):
    run = _run(_pool())
    deps = fake_deps(spread=lambda vec: spread)  # z 4.7 < 5.0; no matrix (vec0); no spread at all
    assert topical_overlap(run, conf, deps) is None
    assert [c.node_id for c in run.pool] == ["b"]
    assert run.candidates[0].stage == "no_overlap" and run.candidates[0].standing is None


def test_only_the_nearest_hit_may_pass_on_its_standing(conf):
    pool = _pool()
    pool[1].raw_cosine = 0.50  # the nearest hit shares a word: it passes on that; "a" is not the nearest
    run = _run(pool)
    assert topical_overlap(run, conf, fake_deps(spread=lambda vec: (0.10, 0.01))) is None
    assert [c.node_id for c in run.pool] == ["b"]


def test_the_pass_is_off_at_an_infinite_threshold(conf):
    from dataclasses import replace

    run = _run(_pool())
    assert topical_overlap(run, replace(conf, overlap_z=math.inf), fake_deps(spread=lambda vec: (0.1, 0.01))) is None
    assert [c.node_id for c in run.pool] == ["b"]


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
