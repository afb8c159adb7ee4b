"""A consumer that fits something of its own on the scorer's probabilities pins the scorer file it was fitted on
(memory.ranking.scorer.PINNED): whisper's logistic gate reads recall's probabilities, so whisper's recall calls keep
the file the gate was fitted on while recall itself takes a refit."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pytest

from memory.domain.search import SearchQuery
from memory.ranking import thresholds
from memory.ranking.scorer import PINNED, WEIGHTS_FILE, load_scorer, pinned_for
from memory.search import recall, recall_pool

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
TEXTS = ("The billing service runs PostgreSQL 16 on a managed instance",
         "Deploys go out on Tuesdays after the standup",
         "Billing invoices are sent on the first of the month",
         "Garden sensors report soil moisture every fifteen minutes")


def test_inside_a_pin_the_default_scorer_and_its_thresholds_are_the_pinned_files():
    assert load_scorer() is load_scorer(WEIGHTS_FILE)
    with pinned_for("whisper") as name:
        assert name == PINNED["whisper"]
        assert load_scorer() is load_scorer(name)
        assert thresholds.recall_floor() == load_scorer(name).thresholds["recall_floor"]
        assert load_scorer(WEIGHTS_FILE).version == load_scorer(WEIGHTS_FILE).version  # a name still wins
    assert load_scorer() is load_scorer(WEIGHTS_FILE)


def test_an_unknown_consumer_is_refused():
    with pytest.raises(ValueError, match="unknown scorer consumer"):
        with pinned_for("nobody"):
            pass


def test_whispers_recall_calls_score_with_its_pinned_file_and_recall_with_its_own(mem):
    from whisper.conf import get_conf
    from whisper.services.respond import whisper_deps

    for text in TEXTS:
        mem(text, auto_link=False)
    query = SearchQuery(query="which database does billing run on", limit=4, min_score=0.0, activation=False)
    pool = recall_pool(query=query, now=NOW)
    by_row = dict(zip(pool.row_ids, range(len(pool.row_ids))))
    pinned = load_scorer(PINNED["whisper"]).probabilities(pool.matrix)
    own = load_scorer(WEIGHTS_FILE).probabilities(pool.matrix)
    assert PINNED["whisper"] != WEIGHTS_FILE and not np.allclose(pinned, own)

    from memory.models import NodeRow

    row_of = dict(NodeRow.objects.values_list("uid", "id"))
    direct = recall(query=query, now=NOW)
    whispered = whisper_deps(conf=get_conf(), session_id=None, now=NOW).search(query)
    assert direct and whispered
    for hit in direct:
        assert hit.score == pytest.approx(own[by_row[row_of[hit.node_id]]], abs=1e-6)
    for hit in whispered:
        assert hit.score == pytest.approx(pinned[by_row[row_of[hit.node_id]]], abs=1e-6)


def test_whispers_calibrated_settings_come_from_its_pinned_file(settings):
    from whisper.conf import get_conf

    settings.ORMAH = {k: v for k, v in settings.ORMAH.items() if k not in ("WHISPER_MIN_SCORE",
                                                                          "WHISPER_GATE_NO_RERANKER")}
    pinned, own = load_scorer(PINNED["whisper"]).thresholds, load_scorer(WEIGHTS_FILE).thresholds
    assert pinned["recall_floor"] != own["recall_floor"]
    conf = get_conf()
    assert (conf.min_score, conf.gate_no_reranker) == (pinned["recall_floor"], pinned["whisper_gate"])
