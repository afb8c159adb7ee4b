"""Whisper does no work recall already did, and none for memories it will not show (issue 13, item 2)."""

from __future__ import annotations

from dataclasses import replace

from tests.whisper.conftest import cand, fake_deps, hit, intent, make_run, unit
from whisper.stages.render import render_text
from whisper.stages.retrieve import retrieve


def test_retrieve_reads_stored_vectors_only_for_hits_recall_has_no_cosine_for(conf):
    asked = []
    hits = [replace(hit("a", row_id=1), raw_cosine=0.71), hit("b", row_id=2, source="fts")]
    deps = fake_deps(search=lambda q: hits, cosines=lambda vec, ids: asked.append(list(ids)) or {2: 0.33})
    run = make_run("how is the index stored?", intent=intent("technical"), query_vec=unit(1.0))
    retrieve(run, conf, deps)
    assert asked == [[2]]
    assert {c.node_id: c.raw_cosine for c in run.candidates} == {"a": 0.71, "b": 0.33}


def test_retrieve_skips_the_vector_read_when_recall_has_every_cosine(conf):
    asked = []
    hits = [replace(hit("a", row_id=1), raw_cosine=0.71), replace(hit("b", row_id=2), raw_cosine=0.52)]
    deps = fake_deps(search=lambda q: hits, cosines=lambda vec, ids: asked.append(list(ids)) or {})
    retrieve(make_run(intent=intent("technical"), query_vec=unit(1.0)), conf, deps)
    assert asked == []


def test_warnings_are_computed_for_the_memories_being_shown_only(conf):
    shown = cand("shown", title="The index is SQLite")
    shown.hit = hit("shown", title="The index is SQLite")
    gated = cand("gated", title="Something else")
    gated.hit = hit("gated", title="Something else")
    asked = []

    def warnings(hits):
        asked.append([h.node_id for h in hits])
        return list(hits)

    run = make_run(pool=[shown])
    run.candidates = [shown, gated]
    assert render_text(run, conf, fake_deps(warnings=warnings)) is None
    assert asked == [["shown"]]
    assert [c.node_id for c in run.selected] == ["shown"]


def test_a_long_memory_is_whispered_by_the_passage_that_matched(conf):
    content = "# Guide\n\nIntro about installing.\n\n## Backups\n\nRestore with litestream restore.\n\n## Other\n\nMore."
    start = content.index("## Backups")
    end = content.index("## Other")
    long_hit = replace(hit("doc", row_id=1, content=content), raw_cosine=0.7, passage=(start, end))
    run = make_run("how do I restore the backup?", intent=intent("technical"), query_vec=unit(1.0))
    retrieve(run, conf, fake_deps(search=lambda q: [long_hit]))
    assert run.candidates[0].content == content[start:end]
    assert run.candidates[0].hit.content == content  # the memory itself is untouched
