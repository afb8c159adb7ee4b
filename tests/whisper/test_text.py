"""Pure text rules: machine-generated prompts, acknowledgements, short prompts, tokens, budgets."""

from __future__ import annotations

import re

import pytest

from whisper.text import (
    about_user, alnum_count, estimate_tokens, fold, is_acknowledgement, looks_like_follow_up,
    synthetic_match, topic_tokens, truncate_words,
)


@pytest.mark.parametrize(("prompt", "marker"), [
    ("<task-notification>Task lint done</task-notification>", "<task-notification>"),
    ("  <TASK-NOTIFICATION>x", "<task-notification>"),
    ('<scheduled-task name="nightly">check</scheduled-task>', "<scheduled-task"),
    ("# Autonomous loop check\ncontinue", "# autonomous loop check"),
    ("<command-name>/clear</command-name>", "<command-name>"),
    ("<local-command-stdout>ok</local-command-stdout>", "<local-command-stdout>"),
    ("[Request interrupted by user for tool use]", "[request interrupted by user"),
    ("This session is being continued from a previous conversation that ran out of context.",
     "this session is being continued from a previous conversation"),
    ("Stop hook feedback:\n[npm test]: 2 tests failed in src/cart.test.ts", "stop hook feedback:"),
])
def test_machine_generated_prompts_are_recognised(prompt, marker):
    assert synthetic_match(prompt) == marker


@pytest.mark.parametrize("prompt", [
    "how do we deploy?",
    "<ide_opened_file>src/app.py</ide_opened_file> why does this fail?",
    "<system-reminder>be brief</system-reminder> what port do we use?",
    "please look at the <task-notification> parser",
    "why is the stop hook feedback: so noisy?",
])
def test_human_prompts_and_wrapped_prompts_are_not_synthetic(prompt):
    assert synthetic_match(prompt) is None


def test_configured_patterns_extend_the_synthetic_filter():
    assert synthetic_match("[cron] nightly run", [re.compile(r"\[cron\]", re.I)]) == r"\[cron\]"


@pytest.mark.parametrize("prompt", [
    "thanks!", "Thank you, that helps.", "ok", "okay", "got it, thanks", "perfect", "sounds good", "makes sense",
    "yes please", "lgtm 👍", "go ahead", "Great, thanks!!", "done", "that's all", "k",
])
def test_acknowledgements(prompt):
    assert is_acknowledgement(prompt) is True


@pytest.mark.parametrize("prompt", [
    "thanks, now fix the tests", "ok so how do we deploy", "no, use postgres instead", "perfect the cache layer",
])
def test_acknowledgement_with_a_request_is_not_an_acknowledgement(prompt):
    assert is_acknowledgement(prompt) is False


@pytest.mark.parametrize(("prompt", "count"), [("", 0), ("?!", 0), ("k", 1), ("ok?", 2), ("héé", 3), ("a b c", 3)])
def test_alnum_count(prompt, count):
    assert alnum_count(prompt) == count


def test_topic_tokens_drop_stop_words_short_words_and_excluded_names_and_fold_suffixes():
    assert topic_tokens("How do the Ormah migrations handle sqlite-vec tables?", exclude=["ormah"]) == {
        "migr", "handl", "sqlite-vec", "sqlit", "vec", "tabl",
    }


@pytest.mark.parametrize(("words", "stem"), [
    (("deploy", "deploys", "deployed", "deploying"), "deploy"),
    (("cache", "caches", "cached", "caching"), "cach"),
    (("table", "tables"), "tabl"),
    (("process", "processes"), "process"),
    (("library", "libraries"), "library"),
    (("migration", "migrations"), "migr"),
    (("maintainer", "maintainers", "maintains", "maintained"), "maintain"),  # an agent noun meets its verb
    (("teacher", "teaches"), "teach"),
    (("register", "registered", "registers"), "regist"),
    (("order", "ordered", "orders"), "order"),  # a short stem keeps its "-er"
    (("server", "servers"), "server"),
    (("user", "users"), "user"),
])
def test_fold_meets_plurals_and_verb_forms_at_one_stem(words, stem):
    assert {fold(w) for w in words} == {stem}


@pytest.mark.parametrize(("text", "tokens"), [("", 0), ("abcd", 2), ("abcdefgh", 2), ("a b c d e f", 8)])
def test_estimate_tokens_is_the_larger_of_chars_and_words(text, tokens):
    assert estimate_tokens(text) == tokens


def test_truncate_words_cuts_at_a_word_and_marks_the_cut():
    assert truncate_words("The quick brown fox jumps over the lazy dog", 20) == "The quick brown fox…"
    assert truncate_words("short  text\nhere", 50) == "short text here"
    assert len(truncate_words("x" * 100, 10)) == 10


@pytest.mark.parametrize(("prompt", "expected"), [
    ("how do I take my coffee?", True), ("what do I do for work?", True), ("I'm back", True),
    ("how does python's garbage collector work?", False), ("what is a webhook?", False),
])
def test_about_user(prompt, expected):
    assert about_user(prompt) is expected


@pytest.mark.parametrize("prompt, expected", [
    ("and what does she do for work?", True),
    ("what about the weight limit?", True),
    ("ok and how do I restore it?", True),
    ("and who gets paged for it?", True),
    ("how did it go the second time?", True),
    ("is it ok to push now", False),  # a bare "it" that refers to nothing
    ("deploy loafbook", False),
    ("how do I make loguru safe to use from several processes", False),
    ("and then write a long explanation of every single step we took in the migration so far please", False),
    ("is there a cap on the optimiser", False),  # "there", "that kind of", Dutch "en": session 19's, gone in 21
    ("entries older than a year, can we drop them", True),  # "them"
    ("enable the cache", False),
    ("en route to the office, what's the gate code", False),
])
def test_looks_like_follow_up(prompt, expected):
    assert looks_like_follow_up(prompt) is expected


def test_attachment_placeholders_are_not_prompt_text():
    assert alnum_count("[Image #1]") == 0
    assert alnum_count("[Pasted text #2 +30 lines]") == 0
    assert alnum_count("[Image #1] what is this error?") == len("whatisthiserror")
