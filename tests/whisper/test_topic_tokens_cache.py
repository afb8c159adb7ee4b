"""whisper.text.topic_tokens works a text's tokens out once per process (issue 13, session 20: ~40 calls a whisper
call, mostly on the same candidates' texts) and still hands every caller a set of its own, exclusions applied."""

from __future__ import annotations

from whisper.text import PAGE_CACHE_TEXTS, TOPIC_CACHE_CHARS, _page_topic_tokens, _topic_tokens, topic_tokens

TEXT = "Deploying routewise-api v2.1.0 to the build_box on Python 3.12.0, for a living"
ALL = {"api", "box", "build", "build_box", "deploy", "job", "python", "routewis", "routewise-api"}


def test_a_texts_tokens_are_worked_out_once_and_exclusions_taken_out_after():
    _topic_tokens.cache_clear()
    assert topic_tokens(TEXT) == ALL
    # a word is left out as before: by its folded form, empty names skipped, any iterable
    assert topic_tokens(TEXT, exclude=["Routewise", "", "boxes"]) == ALL - {"routewis", "box"}
    assert topic_tokens(TEXT, exclude=(w for w in ["python"])) == ALL - {"python"}
    info = _topic_tokens.cache_info()
    assert (info.misses, info.hits) == (1, 2)


def test_every_call_gets_a_set_of_its_own():
    first = topic_tokens(TEXT)
    first.add("changed")
    first.discard("deploy")
    assert topic_tokens(TEXT) == ALL
    assert isinstance(topic_tokens(TEXT), set)


def test_a_long_page_is_held_in_the_small_cache_of_pages():
    _topic_tokens.cache_clear()
    _page_topic_tokens.cache_clear()
    page = (TEXT + " ") * (TOPIC_CACHE_CHARS // len(TEXT) + 1)
    assert topic_tokens(page) == ALL
    assert topic_tokens(page, exclude=["python"]) == ALL - {"python"}
    assert _topic_tokens.cache_info().currsize == 0
    info = _page_topic_tokens.cache_info()
    assert (info.misses, info.hits, info.maxsize) == (1, 1, PAGE_CACHE_TEXTS)
