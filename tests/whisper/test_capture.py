"""Memory candidates from transcripts without an LLM: "remember that", decisions, preferences."""

from __future__ import annotations

import pytest

from whisper.capture import Extracted, classify_sentence, extract_candidates, sentences
from whisper.transcript import Turn


@pytest.mark.parametrize(("sentence", "expected"), [
    ("remember that the staging database listens on port 5433",
     ("The staging database listens on port 5433.", "fact", "remember")),
    ("Please remember: I prefer dark themes in every editor",
     ("I prefer dark themes in every editor.", "preference", "remember")),
    ("We decided to use Meilisearch instead of Elasticsearch.",
     ("We decided to use Meilisearch instead of Elasticsearch.", "decision", "decision")),
    ("let's go with option B for the cache", ("Let's go with option B for the cache.", "decision", "decision")),
    ("I prefer pytest over unittest", ("I prefer pytest over unittest.", "preference", "preference")),
    ("never use force-push on main", ("Never use force-push on main.", "preference", "preference")),
    ("from now on always run the linter before committing",
     ("From now on always run the linter before committing.", "preference", "preference")),
])
def test_sentences_worth_remembering(sentence, expected):
    assert classify_sentence(sentence) == expected


@pytest.mark.parametrize("sentence", [
    "do you remember what we decided?",  # a question
    "what do I prefer for tests?",
    "remember that",  # nothing to remember
    "the build is green",  # nothing to remember
    "I like",  # too short
])
def test_sentences_not_worth_remembering(sentence):
    assert classify_sentence(sentence) is None


def test_sentences_split_on_punctuation_and_lines_and_drop_code():
    text = "First point. Second one!\n- third line\n```\nremember that x = 1\n```"
    assert sentences(text) == ["First point.", "Second one!", "third line"]


def test_only_user_turns_are_mined_and_repeats_dropped():
    turns = [
        Turn("user", "Remember that invoices are sent on the 1st. Thanks!"),
        Turn("assistant", "We decided to use Stripe. I prefer short answers."),
        Turn("user", "remember that invoices are sent on the 1st"),
        Turn("user", "ok. We'll use Postgres 16 for the new service."),
    ]
    assert extract_candidates(turns) == [
        Extracted("Invoices are sent on the 1st.", "fact", "remember", 0),
        Extracted("We'll use Postgres 16 for the new service.", "decision", "decision", 3),
    ]
