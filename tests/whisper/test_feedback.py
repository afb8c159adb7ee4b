"""Feedback: affinity rows in the whisper's prompt context; +1 is confirmed use, once per injection."""

from __future__ import annotations

import pytest

from memory.errors import NodeNotFound, ValidationFailed
from memory.models import NodeRow
from whisper.errors import WhisperLogNotFound
from whisper.models import AffinityRow, WhisperCandidateRow
from whisper.services import feedback_submit, whisper_respond

PROMPT = "How is the ormah index stored? Is it sqlite?"


@pytest.fixture
def injected(mem):
    node = mem("Ormah keeps its search index in SQLite with FTS5 and sqlite-vec.", space="ormah", auto_link=False)
    result = whisper_respond(prompt=PROMPT, session_id="s1", space="ormah")
    assert result.node_ids == (node.id,)
    return node, result.whisper_log_id


def access_count(node) -> int:
    return NodeRow.objects.get(uid=node.id).access_count


def test_positive_feedback_records_affinity_and_counts_as_use(injected):
    node, log_id = injected
    result = feedback_submit(node_ref=node.short_id, signal=1, source="explicit", whisper_log_id=log_id)
    assert (result.node_id, result.whisper_log_id, result.affinity_recorded, result.use_confirmed) == (
        node.id, log_id, True, True)
    assert list(AffinityRow.objects.values_list("node_uid", "signal", "source", "decision_id")) == [
        (node.id, 1, "explicit", log_id)]
    assert access_count(node) == 1
    assert WhisperCandidateRow.objects.get(decision_id=log_id, node_uid=node.id).use_confirmed is True


def test_the_same_injection_is_counted_as_use_only_once(injected):
    node, log_id = injected
    feedback_submit(node_ref=node.id, signal=1, whisper_log_id=log_id)
    second = feedback_submit(node_ref=node.id, signal=1, source="implicit", whisper_log_id=log_id)
    assert (second.use_confirmed, access_count(node), AffinityRow.objects.count()) == (False, 1, 2)


def test_negative_feedback_only_lowers_affinity(injected):
    node, log_id = injected
    result = feedback_submit(node_ref=node.id, signal=-1, whisper_log_id=log_id)
    assert (result.use_confirmed, access_count(node)) == (False, 0)
    assert list(AffinityRow.objects.values_list("signal", flat=True)) == [-1]


def test_without_a_log_id_the_nodes_latest_injection_gives_the_context(injected):
    node, log_id = injected
    assert feedback_submit(node_ref=node.id, signal=1).whisper_log_id == log_id


def test_feedback_on_a_never_whispered_memory_counts_as_use_without_affinity(mem):
    node = mem("A memory nobody whispered.", auto_link=False)
    result = feedback_submit(node_ref=node.id, signal=1)
    assert (result.affinity_recorded, result.use_confirmed, access_count(node)) == (False, True, 1)


def test_feedback_steers_later_whispers_for_similar_prompts(injected):
    node, log_id = injected
    feedback_submit(node_ref=node.id, signal=-1, whisper_log_id=log_id)
    later = whisper_respond(prompt=PROMPT, session_id="s2", space="ormah")
    row = WhisperCandidateRow.objects.get(decision_id=later.whisper_log_id, node_uid=node.id)
    assert row.affinity == -0.15


@pytest.mark.parametrize(("kwargs", "error"), [
    ({"signal": 0}, ValidationFailed),
    ({"signal": 1, "source": "auto"}, ValidationFailed),
    ({"signal": 1, "whisper_log_id": 999}, WhisperLogNotFound),
])
def test_bad_feedback_is_refused(injected, kwargs, error):
    with pytest.raises(error):
        feedback_submit(node_ref=injected[0].id, **kwargs)


def test_unknown_memory_is_not_found(db, home):
    with pytest.raises(NodeNotFound):
        feedback_submit(node_ref="abcdef12", signal=1)


def test_feedback_on_a_merged_away_memory_lands_on_its_keeper(injected, mem):
    from memory.services import node_merge

    gone, log_id = injected
    keep = mem("The ormah index lives in SQLite (FTS5 and sqlite-vec).", space="ormah", auto_link=False)
    node_merge(keep_ref=keep.id, discard_ref=gone.id)
    result = feedback_submit(node_ref=gone.short_id, signal=1, whisper_log_id=log_id)
    assert (result.node_id, result.merged_from, result.whisper_log_id, result.affinity_recorded,
            result.use_confirmed) == (keep.id, gone.id, log_id, True, True)
    assert list(AffinityRow.objects.values_list("node_uid", "signal", "decision_id")) == [(keep.id, 1, log_id)]
    assert (access_count(keep), WhisperCandidateRow.objects.get(decision_id=log_id, node_uid=gone.id).use_confirmed) \
        == (1, True)


def test_feedback_after_the_merge_is_undone_stays_on_the_old_id(injected, mem):
    from memory.services import merge_undo, node_merge

    gone, log_id = injected
    keep = mem("The ormah index lives in SQLite (FTS5 and sqlite-vec).", space="ormah", auto_link=False)
    merge_undo(ref=node_merge(keep_ref=keep.id, discard_ref=gone.id).merge_id)
    result = feedback_submit(node_ref=gone.id, signal=-1, whisper_log_id=log_id)
    assert (result.node_id, result.merged_from) == (gone.id, None)
