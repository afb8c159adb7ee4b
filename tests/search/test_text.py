"""Query words: stop words, first person, questions, history intent, topicless (pure temporal) text."""

from __future__ import annotations

import pytest

from memory.domain import text


@pytest.mark.parametrize(("query", "expected"), [
    ("Which DB do we use?", ["db", "use"]),
    ("SQLITE_BUSY on write", ["sqlite_busy", "write"]),
    ("the a of I", []),
    ("EU868 1% duty cycle", ["eu868", "duty", "cycle"]),
])
def test_content_words(query, expected):
    assert text.content_words(query) == expected


@pytest.mark.parametrize(("query", "expected"), [
    ("where do I live?", True), ("what's my cat called?", True), ("tell me", True), ("which db do we use?", False),
    ("what do you know", False), ("Iceland trip", False),
    ("how do I ship a new version to production", False), ("How can I run the tests?", False),
    ("how do I like to work", True), ("how do I reach my dentist", True), ("how should I write commit messages", True),
    ("can I schedule a call at 8pm", True),
])
def test_is_first_person(query, expected):
    assert text.is_first_person(query) is expected


@pytest.mark.parametrize(("query", "expected"), [
    ("what is the deploy procedure", True), ("How do I deploy", True), ("  did we ship", True),
    ("deploy procedure", False), ("whatever happened", False), ("if a disk dies, how do I restore", False),
])
def test_is_question(query, expected):
    assert text.is_question(query) is expected


@pytest.mark.parametrize(("query", "expected"), [
    ("what editor did I use previously?", True), ("where did I live before Lisbon?", True),
    ("what did I used to use", True), ("my old editor", True), ("history of the billing db", True),
    ("how old is my daughter?", False), ("a 3-year-old laptop", False), ("she is ten years old", False),
    ("which editor do I use?", False),
])
def test_asks_for_history(query, expected):
    assert text.asks_for_history(query) is expected


@pytest.mark.parametrize(("query", "expected"), [
    ("what did we do", True), ("show me what happened", True), ("", True),
    ("what did I decide", False), ("meetings", False),
])
def test_is_topicless(query, expected):
    assert text.is_topicless(query) is expected


def test_title_words_delete_punctuation_instead_of_splitting():
    assert text.title_words("What's the invoice-v2-layout flag?") == {"whats", "the", "invoicev2layout", "flag"}
