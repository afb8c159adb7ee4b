"""The identity set's first sentences are embedded once per process (whisper.conventions), and the web master embeds
them before its workers fork (whisper.services.conventions_warm, called by ormah_site/gunicorn_conf.py `preload`):
a task call after the warm-up, or after an earlier task call, embeds no first sentence; a memory added since is the
only one embedded. Counted on the real MiniLM embedder (a wrapper that counts the texts it passes on)."""

from __future__ import annotations

import pytest

from memory import runtime
from whisper import conventions
from whisper.classifier import archetype_matrices
from whisper.conf import WhisperConf
from whisper.models import WhisperCandidateRow
from whisper.services import conventions_warm, whisper_respond

from .test_conventions import MEMORIES

TASK = "spin up a venv and install the deps"


class Counting:
    """The real embedder, counting the passages it embeds (first sentences are embedded as passages)."""

    def __init__(self, embedder) -> None:
        self.embedder, self.documents = embedder, []
        self.model_id, self.dim = embedder.model_id, embedder.dim

    def embed_query(self, text: str):
        return self.embedder.embed_query(text)

    def embed_documents(self, texts):
        self.documents += list(texts)
        return self.embedder.embed_documents(texts)


@pytest.fixture
def person(mem):
    from memory.services import self_ensure

    self_ensure()
    conventions._first_vectors.clear()  # this process's cache: other tests' calls filled it with the same sentences
    return {key: mem(content, title=title, type=kind, about_self=True, auto_link=False)
            for key, (title, content, kind) in MEMORIES.items()}


@pytest.fixture
def counting() -> Counting:
    embedder = Counting(runtime.embedder())
    archetype_matrices(embedder)  # the intent classifier's phrases, embedded once per process: not counted here
    embedder.documents.clear()
    return embedder


def test_after_the_warm_up_a_task_call_embeds_no_first_sentence(person, counting):
    conventions_warm(embedder=counting)
    assert len(counting.documents) == len(MEMORIES)  # the whole set, in the master
    counting.documents.clear()
    result = whisper_respond(prompt=TASK, session_id="warm", embedder=counting)
    assert result.node_ids == (person["env"].id,)  # the warm vectors are the ones the call uses
    assert counting.documents == []


def test_a_later_call_embeds_only_what_is_new(person, counting, mem):
    whisper_respond(prompt=TASK, session_id="warm", embedder=counting)
    assert len(counting.documents) == len(MEMORIES)  # no warm-up: the first task call embeds the set
    counting.documents.clear()
    whisper_respond(prompt="I'll just put everything in one giant PR", session_id="warm2", embedder=counting)
    assert counting.documents == []
    mem("Lint Python with ruff before every commit. No exceptions.", title="Lint", type="preference",
        about_self=True, auto_link=False)
    counting.documents.clear()
    whisper_respond(prompt=TASK, session_id="warm3", embedder=counting)
    assert counting.documents == ["Lint Python with ruff before every commit."]


def test_a_small_identity_set_is_not_warmed(mem, counting):
    from memory.services import self_ensure

    self_ensure()
    conventions._first_vectors.clear()
    mem("I prefer tabs over spaces.", title="Tabs", type="preference", about_self=True, auto_link=False)
    conventions_warm(embedder=counting)
    assert counting.documents == []  # below the set standouts() measures: nothing it would read


# ---- standouts are computed only where they pass: at the logistic gate, without a reranker (whisper.stages.retrieve)

def _standouts_in_ledger(result) -> list[str]:
    rows = WhisperCandidateRow.objects.filter(decision_id=result.whisper_log_id,
                                              gate_threshold=WhisperConf().standout_z)
    return list(rows.values_list("node_uid", flat=True))


def test_with_the_logistic_gate_the_task_computes_standouts(person, counting):
    result = whisper_respond(prompt=TASK, session_id="branch", embedder=counting)
    assert len(counting.documents) == len(MEMORIES)  # the first sentences, read by standouts()
    assert _standouts_in_ledger(result) == [person["env"].id]


def test_with_the_gate_weights_off_no_standout_is_computed(person, counting, settings):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_GATE_WEIGHTS": "off"}
    result = whisper_respond(prompt=TASK, session_id="branch", embedder=counting)
    assert counting.documents == []  # no first sentence embedded for nothing
    assert _standouts_in_ledger(result) == []
    conventions_warm(embedder=counting)
    assert counting.documents == []  # nor in the web master


def test_with_a_reranker_no_standout_is_computed(person, counting, settings):
    settings.ORMAH = {**settings.ORMAH, "WHISPER_RERANKER": "tests.whisper.test_reranker.ConstantReranker"}
    result = whisper_respond(prompt=TASK, session_id="branch", embedder=counting)
    assert counting.documents == []
    assert _standouts_in_ledger(result) == []
    conventions_warm(embedder=counting)
    assert counting.documents == []
