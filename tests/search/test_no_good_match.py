""""No good match" through the store's own vocabulary: a query none of whose words occur in any memory, and whose
meaning is close to nothing, returns an empty list, even over long pages that the scorer likes (many words)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memory.domain.search import SearchQuery
from memory.ranking import thresholds
from memory.search import recall, recall_pool
from memory.search.candidates import vocabulary_share

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)

_SECTIONS = {
    "envload": ("envload reads key-value pairs from a .env file and adds them to the environment variables of the "
                "process, so settings stay out of the source code. Call load_env() at the top of your program; "
                "existing variables win unless override=True is given. Values may be quoted, may span lines inside "
                "double quotes, and may reference other variables with ${NAME} expansion."),
    "httpcli": ("httpcli is a command-line HTTP client for humans. Send a request with `httpcli GET example.org`; "
                "JSON bodies are written as key=value pairs and headers as Name:value. Responses are coloured and "
                "formatted, sessions keep cookies between requests, and downloads resume with --continue. "
                "Authentication supports basic, digest and bearer tokens."),
    "yamlkit": ("yamlkit parses and emits YAML 1.2 documents with round-trip preservation of comments, key order "
                "and anchors. Load a document with yamlkit.load(stream) and write it back with yamlkit.dump(data, "
                "stream). A safe loader refuses arbitrary tags; the schema option selects the core, json or "
                "failsafe schema. Line width, indentation and flow style are configurable."),
    "taskq": ("taskq runs background jobs from a Redis-backed queue with retries, exponential backoff and "
              "scheduled tasks. Decorate a function with @task, enqueue it with .delay(), and start workers with "
              "`taskq worker --concurrency 4`. Failed jobs move to a dead-letter queue after the retry budget is "
              "spent, and a dashboard shows queue depth, throughput and failures."),
}


def _page(name: str, body: str) -> str:
    """A README-like page of about 4 KB: headings, the body, installation, usage, changelog entries."""
    changelog = "\n".join(f"### {name} 1.{i}.0\n\n- Fixed an edge case in the parser when input ended early.\n"
                          f"- Improved error messages and documentation for release 1.{i}." for i in range(12))
    return (f"# {name}\n\n{body}\n\n## Installation\n\nInstall {name} with pip: `pip install {name}`. It supports "
            f"Python 3.9 and newer on Linux, macOS and Windows.\n\n## Usage\n\n{body}\n\n## Licence\n\nMIT.\n\n"
            f"## Changelog\n\n{changelog}\n")


@pytest.fixture
def pages(mem):
    return {name: mem(_page(name, body), title=f"{name} README", created=NOW, auto_link=False)
            for name, body in _SECTIONS.items()}


def test_vocabulary_share_counts_the_query_words_the_store_holds():
    assert vocabulary_share(["zzqxv", "blorf"], {"zzqxv": 0, "blorf": 0}) == 0.0
    assert vocabulary_share(["yaml", "blorf"], {"yaml": 3, "blorf": 0}) == 0.5
    assert vocabulary_share([], {}) == 1.0  # no content words: nothing to judge by


def test_nonsense_over_long_pages_is_no_good_match_by_the_unknown_words_rule(pages):
    pool = recall_pool(query=SearchQuery(query="zzqxv blorf"), now=NOW)
    # the rule fires whatever the probability says (scorer v2 kept a long page above "no good match" here; v3,
    # with info_long, no longer does, and the rule still holds for the next scorer that would)
    assert pool.vocabulary == 0.0
    assert pool.best_cosine < thresholds.unknown_words_cosine()
    assert recall(query=SearchQuery(query="zzqxv blorf"), now=NOW) == []


@pytest.mark.parametrize("text", ["qwpl xkcdz vrrmt", "blorf glimmax snoodle"])
def test_other_nonsense_is_no_good_match(pages, text):
    assert recall(query=SearchQuery(query=text), now=NOW) == []


def test_a_question_in_the_stores_words_still_finds_its_page(pages):
    hits = recall(query=SearchQuery(query="how do I load environment variables from a .env file?"), now=NOW)
    assert hits and hits[0].node_id == pages["envload"].id


def test_a_word_the_store_holds_lifts_the_gate(pages):
    pool = recall_pool(query=SearchQuery(query="zzqxv yaml"), now=NOW)
    assert pool.vocabulary == 0.5
    hits = recall(query=SearchQuery(query="zzqxv yaml"), now=NOW)
    assert hits and hits[0].node_id == pages["yamlkit"].id
