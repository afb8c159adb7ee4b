"""whisper.memo: whisper's per-process text caches are bounded by an estimated byte budget, not only by entries
(issue 13, session 20: counted by entries, a cache's bytes followed the store's text lengths). The memo itself is
tested in tests/memory/test_memo.py (memory/memo.py since session 21)."""

from __future__ import annotations

from whisper import memo
from whisper.memo import ByteLRU
from whisper.stages import scoring
from whisper.text import TOPIC_CACHE_CHARS, _page_topic_tokens, _topic_tokens, fold, topic_tokens


def _texts(n: int, chars: int) -> list[str]:
    """n distinct texts of about `chars` characters, every word distinct (many tokens a text)."""
    return [" ".join(f"w{i}x{j}" for j in range(chars // 5))[:chars].rsplit(" ", 1)[0] for i in range(n)]


def test_whispers_topic_token_cache_stays_under_its_byte_budget_when_filled_past_it():
    _topic_tokens.cache_clear()
    texts = _texts(400, TOPIC_CACHE_CHARS - 100)  # ~1.5 MB of keys alone, ~400 entries: far under 8,192 entries
    for text in texts:
        topic_tokens(text)
    info = _topic_tokens.cache_info()
    assert info.max_bytes == memo.TOPIC_BYTES
    assert 0 < info.nbytes <= memo.TOPIC_BYTES
    assert info.currsize < len(texts)
    # the most recent texts are the ones held: asking again is a hit, and the answer is the same
    hits = info.hits
    assert topic_tokens(texts[-1]) == set(_topic_tokens.__wrapped__(texts[-1]))
    assert _topic_tokens.cache_info().hits == hits + 1


def test_memory_words_and_page_caches_stay_under_their_budgets():
    scoring.memory_words.cache_clear()
    scoring._page_memory_words.cache_clear()
    _page_topic_tokens.cache_clear()
    for text in _texts(300, TOPIC_CACHE_CHARS - 100) + _texts(40, 3 * TOPIC_CACHE_CHARS):
        scoring.candidate_words(text, ("ormah",))
    for cache, budget in ((scoring.memory_words, memo.MEMORY_WORDS_BYTES),
                          (scoring._page_memory_words, memo.PAGE_MEMORY_WORDS_BYTES),
                          (_page_topic_tokens, memo.PAGE_TOPIC_BYTES)):
        info = cache.cache_info()
        assert 0 < info.nbytes <= budget, cache.__name__


def test_all_of_whispers_text_caches_together_stay_under_8_mib():
    caches = (fold, _topic_tokens, _page_topic_tokens, scoring.memory_words, scoring._page_memory_words,
              scoring._space_words)
    assert all(isinstance(c.memo, ByteLRU) for c in caches)
    assert sum(c.max_bytes for c in caches) <= 8 * 1024 * 1024
