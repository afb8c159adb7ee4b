"""The learned scorer: its file, its features, its thresholds, and what recall does with them."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest

from memory.domain.search import SearchQuery
from memory.ranking import thresholds
from memory.ranking.features import FEATURES, Candidate, feature_matrix, query_facts, stem
from memory.ranking.scorer import WEIGHTS_FILE, Scorer, load_scorer
from memory.search import recall

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def test_the_packaged_scorer_loads_with_a_version_and_known_features():
    scorer = load_scorer()
    assert scorer.version.startswith(WEIGHTS_FILE.removeprefix("weights-").removesuffix(".json"))
    assert set(scorer.features) <= set(FEATURES)
    assert len(scorer.coef) == len(scorer.features) == len(scorer.mean) == len(scorer.scale)
    assert 0 < thresholds.recall_floor() <= thresholds.no_good_match() < thresholds.whisper_gate() < 1


def test_a_scorer_file_naming_an_unknown_feature_is_refused():
    with pytest.raises(ValueError, match="unknown features"):
        Scorer.from_dict({"version": "x", "features": ["bm25_rel", "shoe_size"], "mean": [0, 0], "scale": [1, 1],
                          "coef": [1, 1], "intercept": 0})


def test_probabilities_are_on_zero_one_and_grow_with_a_positive_weight():
    names = ["cos"]
    scorer = Scorer.from_dict({"version": "t", "features": names, "mean": [0], "scale": [1], "coef": [4.0],
                               "intercept": -2.0})
    matrix = np.zeros((2, len(FEATURES)))
    matrix[1, FEATURES.index("cos")] = 1.0
    low, high = scorer.probabilities(matrix)
    assert 0 < low < 0.5 < high < 1
    assert low == pytest.approx(1 / (1 + np.exp(2.0)))


def _candidate(content: str, **fields) -> Candidate:
    base = dict(row_id=1, content=content, title="", bm25=None, fts_rank=None, cosine=0.3, centrality=0.2,
                created=NOW, space=None, confidence=None, tier="working", access_count=0, days_since_access=0.0)
    return Candidate(**{**base, **fields})


def test_coverage_weighs_rare_terms_and_phrases_need_adjacent_words():
    facts = query_facts("support group painting", {"support": 0.5, "group": 0.5, "painting": 3.0})
    rows = feature_matrix(facts, [_candidate("She painted at the support group"),
                                  _candidate("A group that offers support")])
    cov, phrase = FEATURES.index("coverage"), FEATURES.index("phrase")
    assert rows[0, cov] == pytest.approx(1.0)  # "painted" and "painting" share the stem "paint"
    assert rows[1, cov] == pytest.approx(1.0 / 4.0)
    assert rows[0, phrase] == pytest.approx(0.5) and rows[1, phrase] == 0.0
    assert stem("paintings") == "painting" and stem("stories") == "story"


def test_window_feature_marks_inside_and_outside():
    facts = query_facts("hike", {"hike": 1.0}, window=(datetime(2023, 8, 1, tzinfo=UTC),
                                                        datetime(2023, 9, 1, tzinfo=UTC)))
    rows = feature_matrix(facts, [_candidate("hike", created=datetime(2023, 8, 14, tzinfo=UTC)),
                                  _candidate("hike", created=datetime(2023, 10, 2, tzinfo=UTC))])
    assert rows[:, FEATURES.index("window")].tolist() == [1.0, -1.0]


def test_space_features_tell_the_callers_project_from_another_and_from_global_memories():
    facts = query_facts("run the integration tests", {"run": 1.0, "integration": 2.0, "test": 1.0},
                        default_space="routewise")
    rows = feature_matrix(facts, [_candidate("Integration tests need the docker stack", space="routewise"),
                                  _candidate("Integration tests need the docker stack", space="docs"),
                                  _candidate("Integration tests need the docker stack", space=None)])
    assert rows[:, FEATURES.index("same_space")].tolist() == [1.0, 0.0, 0.0]
    assert rows[:, FEATURES.index("other_space")].tolist() == [0.0, 1.0, 0.0]
    no_space = feature_matrix(query_facts("integration", {"integration": 2.0}),
                              [_candidate("integration", space="routewise")])
    assert no_space[0, FEATURES.index("same_space")] == 0.0


def test_rare_is_the_rarest_shared_word_and_info_long_marks_only_long_memories():
    facts = query_facts("solver timeout deploy", {"solver": 4.0, "timeout": 2.0, "deploy": 1.0})
    long_page = "The deploy guide covers every service, timeout and region we run. " * 30
    rows = feature_matrix(facts, [_candidate("Raise the solver timeout before a deploy"),
                                  _candidate(long_page), _candidate("Lunch was good")])
    assert rows[:, FEATURES.index("rare")].tolist() == [1.0, 0.5, 0.0]
    info_long = rows[:, FEATURES.index("info_long")]
    assert info_long[0] == 0.0 and info_long[2] == 0.0 and info_long[1] > 1.0


def test_recall_reads_scorer_v5_and_the_held_back_files_still_load_with_every_feature():
    assert load_scorer().version.startswith("v5") and load_scorer().features == FEATURES
    assert load_scorer().meta["whisper_weight"] == 1.0  # session 20: rows of whisper calls weigh as questions do
    for name, version in (("weights-v3.json", "v3"), ("weights-v4.json", "v4")):
        scorer = load_scorer(name)
        assert scorer.version.startswith(version)
        assert scorer.features == FEATURES
        assert set(scorer.thresholds) - thresholds.RETIRED == set(thresholds.DEFAULTS)


def test_the_previous_scorer_file_still_loads_and_scores_todays_features():
    old = load_scorer("weights-v2.json")
    assert old.version.startswith("v2")
    assert set(old.features) < set(FEATURES)
    facts = query_facts("hike", {"hike": 1.0})
    probs = old.probabilities(feature_matrix(facts, [_candidate("We went on a hike"), _candidate("Lunch")]))
    assert probs.shape == (2,) and ((probs > 0) & (probs < 1)).all() and probs[0] > probs[1]


def test_weights_file_is_valid_json_with_thresholds():
    from importlib import resources

    data = json.loads(resources.files("memory.ranking").joinpath(WEIGHTS_FILE).read_text())
    assert set(data["thresholds"]) - thresholds.RETIRED == set(thresholds.DEFAULTS)


def test_nonsense_returns_nothing(mem):
    for text in ("Caroline went to the LGBTQ support group on Sunday and found it moving",
                 "Melanie painted a sunset over the lake with her kids",
                 "The billing service runs PostgreSQL 16 on a managed instance",
                 "Deploys go out on Tuesdays after the standup"):
        mem(text, auto_link=False)
    assert recall(query=SearchQuery(query="zzqxv blorf"), now=NOW) == []
    assert recall(query=SearchQuery(query="what did Melanie paint?"), now=NOW)[0].content.startswith("Melanie")


def test_time_in_the_query_is_a_preference_and_a_month_means_the_latest_one_with_memories(mem):
    dated = {
        "Caroline: I went hiking in the mountains with my friends last weekend": datetime(2023, 8, 14, tzinfo=UTC),
        "Caroline: I signed up for a pottery class at the community centre": datetime(2023, 8, 20, tzinfo=UTC),
        "Caroline: I gave a talk at the school about my transition": datetime(2023, 6, 9, tzinfo=UTC),
        "Caroline: I started researching adoption agencies": datetime(2023, 5, 25, tzinfo=UTC),
        "Melanie: We went camping at the beach with the kids": datetime(2023, 7, 3, tzinfo=UTC),
    }
    ids = {text: mem(text, created=created, auto_link=False).id for text, created in dated.items()}
    hits = recall(query=SearchQuery(query="what did Caroline do in August?", limit=3), now=NOW)
    august = {ids[t] for t, c in dated.items() if c.month == 8}
    assert {h.node_id for h in hits[:2]} == august
    # a window that holds nothing never empties the result
    assert recall(query=SearchQuery(query="what did Caroline do in winter 2019?"), now=NOW)


def test_doctor_reports_the_scorer_version(home, db):
    import io

    from django.core.management import call_command

    out = io.StringIO()
    try:
        call_command("doctor", "--json", stdout=out)
    except SystemExit:
        pass  # another check may fail in a bare test home; the scorer row is what this test reads
    checks = {c["check"]: c for c in json.loads(out.getvalue())["checks"]}
    assert checks["scorer"]["ok"] and checks["scorer"]["detail"].startswith(load_scorer().version)


def test_auto_links_read_a_cosine_not_a_probability_threshold():
    """bench/auto_links.py: on 76 labelled links the scorer's probability found fewer non-superseded links than
    the cosine a remember links on, at ~18x its CPU, so the probability threshold and related_memories are gone."""
    import memory.search

    with pytest.raises(KeyError, match="auto_link"):
        thresholds.threshold("auto_link")
    assert not hasattr(thresholds, "auto_link_threshold")
    assert "related_memories" not in memory.search.__all__ and not hasattr(memory.search, "related_memories")
    assert "auto_link" in thresholds.RETIRED and "auto_link" in load_scorer().thresholds  # v5 still carries it


def test_long_memories_are_tokenised_once_and_the_cache_stays_bounded():
    from memory.ranking import features

    long_text = "The changelog of release {n}: the parser accepts tabs, and the indexer keeps passages. " * 40
    first = features._long_doc(long_text.format(n=1))
    assert features._long_doc(long_text.format(n=1)) is first  # the same object: not tokenised again
    assert first == features._tokens(long_text.format(n=1))
    for n in range(features.LONG_DOC_CACHE + 20):
        features._long_doc(long_text.format(n=n + 2))
    assert len(features._LONG_DOCS) == features.LONG_DOC_CACHE
    assert features._long_doc(long_text.format(n=1)) is not first  # evicted, tokenised afresh, equal
    assert features._long_doc(long_text.format(n=1)) == first


def test_doctor_warns_when_the_store_embeds_with_another_model_than_the_scorer_was_fitted_on(home, db, settings):
    import io

    from django.core.management import call_command

    settings.ORMAH = {**settings.ORMAH, "EMBEDDER": "memory.embeddings.HashEmbedder"}
    out = io.StringIO()
    try:
        call_command("doctor", "--json", stdout=out)
    except SystemExit:
        pass  # another check may fail in a bare test home; the scorer row is what this test reads
    row = {c["check"]: c for c in json.loads(out.getvalue())["checks"]}["scorer"]
    assert row.get("warning") and "test/hash-embedder" in row["detail"]
    assert load_scorer().meta["model"] in row["detail"]
