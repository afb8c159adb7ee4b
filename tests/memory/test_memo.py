"""memory.memo: the byte-bounded LRU (moved from whisper/memo.py in session 21), and memory's ranking text caches
bounded by it (issue 13, session 21: `_doc` held up to 8,192 tokenised memories whatever their length, ~125 MiB of
2,000-character memories at capacity)."""

from __future__ import annotations

import sys
import threading

import pytest

from memory import memo
from memory.memo import ByteLRU, LruDict, args_cost, byte_lru
from memory.ranking import features


def _texts(n: int, chars: int, tag: str = "w") -> list[str]:
    """n distinct texts of about `chars` characters, every word distinct (many tokens a text)."""
    return [" ".join(f"{tag}{i}x{j}" for j in range(chars // 5))[:chars].rsplit(" ", 1)[0] for i in range(n)]


def _held_bytes(entries) -> int:
    """The bytes of held `_doc` results counted afresh: the key texts, the stems' string and its count."""
    total = 0
    for key, ((joined, count), _) in entries:
        total += sum(sys.getsizeof(k) for k in key) + sys.getsizeof(joined) + sys.getsizeof(count)
    return total


def test_the_tokenised_memory_cache_stays_under_its_byte_budget_on_a_store_of_long_memories():
    features._doc.cache_clear()
    texts = _texts(1500, features.LONG_DOC_CHARS)  # ~4.2 KB an entry (~59 KB as sets before session 23)
    for text in texts:
        features._doc(text)
    info = features._doc.cache_info()
    assert info.max_bytes == memo.DOC_BYTES
    assert 0 < info.nbytes <= memo.DOC_BYTES
    assert info.currsize < len(texts)
    assert _held_bytes(features._doc.memo.entries.items()) <= info.nbytes  # the estimate covers what is held
    # the results are those of the uncached function, held or evicted
    for text in (texts[0], texts[-1]):
        assert features._doc(text) == features._doc.__wrapped__(text)
    features._doc.cache_clear()


def test_long_memories_cache_stays_under_its_byte_budget():
    texts = _texts(12, 50_000, tag="long")  # ~1.4 MB an entry tokenised: ~17 MB under the old 128-entry bound
    for text in texts:
        features._long_doc(text)
    assert 0 < features.long_doc_bytes() <= memo.LONG_DOC_BYTES
    assert len(features._LONG_DOCS) < len(texts)
    assert features.long_doc_bytes() == sum(cost for _, cost in features._LONG_DOCS.values())
    assert features._long_doc(texts[0]) == features._tokens(texts[0])


def test_title_stems_stay_under_their_budget_and_long_words_are_stemmed_without_being_held():
    features._title_stems.cache_clear()
    for text in _texts(200, 600, tag="title"):
        features._title_stems(text)
    assert 0 < features._title_stems.cache_info().nbytes <= memo.TITLE_STEMS_BYTES
    features._short_stem.cache_clear()
    word = "a" * 200 + "paintings"
    assert features.stem(word) == "a" * 200 + "painting"
    assert features.stem("paintings") == "painting"
    info = features._short_stem.cache_info()
    assert (info.currsize, info.maxsize) == (1, memo.STEM_CACHE)


def test_memorys_text_caches_together_stay_under_16_mib():
    stem_bound = memo.STEM_CACHE * memo.STEM_ENTRY_BYTES
    assert sys.getsizeof("x" * memo.STEM_CACHE_CHARS) * 2 + 88 + 48 <= memo.STEM_ENTRY_BYTES
    assert memo.DOC_BYTES + memo.LONG_DOC_BYTES + memo.TITLE_STEMS_BYTES + stem_bound <= 16 * 1024 * 1024


def test_least_recently_used_entries_go_first_and_an_oversized_result_is_not_held():
    calls = []

    @byte_lru(max_bytes=3 * args_cost(("aaaa",), "AAAA"), cost=args_cost)
    def upper(text: str) -> str:
        calls.append(text)
        return text.upper()

    for text in ("aaaa", "bbbb", "cccc", "aaaa", "dddd"):  # "aaaa" used again, so "bbbb" is the one to go
        assert upper(text) == text.upper()
    assert calls == ["aaaa", "bbbb", "cccc", "dddd"]
    upper("bbbb")
    assert calls[-1] == "bbbb"
    info = upper.cache_info()
    assert (info.currsize, info.nbytes) == (3, 3 * args_cost(("aaaa",), "AAAA"))
    big = "x" * info.max_bytes
    assert upper(big) == big.upper()
    assert upper.cache_info().currsize == 3 and upper.cache_info().nbytes <= info.max_bytes
    upper.cache_clear()
    assert upper.cache_info()[:5] == (0, 0, None, 0, 0)


def test_entries_are_also_bounded_by_maxsize():
    square = byte_lru(max_bytes=10**6, cost=args_cost, maxsize=2)(lambda text: text * 2)
    for text in ("a", "b", "c"):
        square(text)
    assert square.cache_info().currsize == 2


def test_a_budget_must_be_positive():
    with pytest.raises(ValueError, match="positive budget"):
        byte_lru(max_bytes=0, cost=args_cost)(str.upper)
    with pytest.raises(ValueError, match="positive budget"):
        byte_lru(max_bytes=100, cost=args_cost, maxsize=0)(str.upper)


def test_threads_sharing_a_cache_keep_its_count_of_bytes_right():
    cache = byte_lru(max_bytes=20_000, cost=args_cost)(lambda text: frozenset(text.split()))
    texts = [f"word{i} other{i % 7} more" for i in range(500)]

    def work(offset: int) -> None:
        for i in range(2000):
            text = texts[(i * 7 + offset) % len(texts)]
            assert cache(text) == frozenset(text.split())

    threads = [threading.Thread(target=work, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    info = cache.cache_info()
    assert info.nbytes == sum(cost for _, cost in cache.memo.entries.values()) <= 20_000


def test_a_store_of_two_thousand_short_memories_is_held_whole_by_the_tokenised_memory_cache():
    """Issue 13, session 23: `_doc` held the stem and pair sets of a memory, ~6 KB for the soak store's ~120-character
    memories, so its 5 MiB held ~860 of 2,000 and recall tokenised most candidates again on every query. It holds a
    memory's stems as one string now: the whole store fits, well under the budget, and nothing is tokenised twice."""
    from bench._common import corpus

    features._doc.cache_clear()
    texts = [m.content for m in corpus(2000, seed=1)]
    for text in texts:
        features._doc(text)
    for text in texts:
        features._doc(text)
    info = features._doc.cache_info()
    assert info.currsize == len(set(texts))
    assert info.misses == len(set(texts))
    assert info.nbytes <= memo.DOC_BYTES // 3
    features._doc.cache_clear()


def test_a_thousand_distinct_titles_are_held_by_the_title_cache():
    """Session 23: a title's stems were a frozenset (~1.4 KB for a six-word title), so TITLE_STEMS_BYTES held ~370
    titles and a store with more distinct titles stemmed most candidates' titles again at every query; one spaced
    string now (~350 bytes)."""
    features._title_stems.cache_clear()
    titles = [f"Release checklist for the billing webhook number {i}" for i in range(1000)]
    for title in titles + titles:
        assert features._title_stems(title) == " " + " ".join(features.stems(title)) + " "
    info = features._title_stems.cache_info()
    assert (info.currsize, info.misses) == (1000, 1000)
    assert info.nbytes <= memo.TITLE_STEMS_BYTES
    features._title_stems.cache_clear()


def test_an_lru_dict_drops_the_least_recently_set_or_read_entry():
    cache = LruDict(2)
    cache["a"], cache["b"] = 1, 2
    cache.get("a")
    cache["c"] = 3
    assert (len(cache), "a" in cache, "b" in cache, cache.get("c")) == (2, True, False, 3)


def test_an_lru_dict_pops_deletes_and_clears():
    cache = LruDict(3)
    cache["a"], cache["b"] = 1, 2
    del cache["a"]
    assert (cache.pop("b"), cache.pop("b", "gone"), cache.get("a", "none"), len(cache)) == (2, "gone", "none", 0)
    cache["c"] = 3
    cache.clear()
    assert len(cache) == 0


def test_an_lru_dict_needs_a_positive_bound():
    with pytest.raises(ValueError, match="positive maxsize"):
        LruDict(0)
