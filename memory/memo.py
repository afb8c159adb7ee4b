"""A per-process memo bounded by an estimated byte budget, for the pure text functions of memory and whisper (issue
13; session 20's whisper/memo.py, moved here in session 21 so memory's ranking caches use it too: memory imports no
whisper).

`functools.lru_cache` bounds a cache by its entries, so what it holds follows the store's text lengths (a memory
text or an imported page can be tens of KB): `byte_lru` also bounds it by the bytes of its keys and results,
estimated cheaply at insert by the caller's `cost(args, result)` (`args_cost`: their `sys.getsizeof`), and evicts
the least recently used entries until the estimate is back under `max_bytes`. A result whose own cost is over the
budget is returned and not held.

Thread-safe (gunicorn's threads share a worker's caches): one lock around the ordered dict; the function itself runs
outside the lock, so two threads may compute the same entry at once and the second insert wins (as lru_cache).
Positional arguments only, which must be hashable; the results are shared between callers, so they must be
immutable (frozensets, strings) or copied by the caller.

`LruDict` is the same bound for a cache that is not a function's memo: a mapping of at most `maxsize` entries
(memory/store.py's per-file caches, session 27).
"""

from __future__ import annotations

import functools
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, NamedTuple

# Estimated bytes of one held entry beyond its key's texts and its result: the ordered dict's slot and link, the key
# tuple, the held (result, cost) pair.
ENTRY_BYTES = 200


class MemoInfo(NamedTuple):
    hits: int
    misses: int
    maxsize: int | None
    currsize: int
    nbytes: int
    max_bytes: int


def _bytes(obj: Any) -> int:
    """`sys.getsizeof` of a string, or of a tuple/set of strings and its strings (each O(1): no scan of a text)."""
    if isinstance(obj, str):
        return sys.getsizeof(obj)
    return sys.getsizeof(obj) + sum(sys.getsizeof(item) for item in obj)


def args_cost(args: tuple, result: Any) -> int:
    """The estimated bytes of an entry whose arguments and result are texts or tuples/sets of texts: their
    `sys.getsizeof` (so a non-ASCII page counts its 2 or 4 bytes a character), each token counted in every entry
    that holds it (an entry's share of a token string held by another is not known at insert)."""
    return ENTRY_BYTES + sum(_bytes(a) for a in args) + _bytes(result)


class ByteLRU:
    """The entries and counts of one memo of `func`: least recently used first, bounded by `max_bytes` (estimated by
    `cost`) and optionally `maxsize`. Called through the function `byte_lru` makes (its hit path kept short: it runs
    ~300,000 times in a full dev run of bench.whisper_stores)."""

    def __init__(self, func: Callable[..., Any], *, max_bytes: int, cost: Callable[[tuple, Any], int],
                 maxsize: int | None = None) -> None:
        if max_bytes <= 0 or (maxsize is not None and maxsize <= 0):
            raise ValueError(f"byte_lru needs a positive budget, got max_bytes={max_bytes} maxsize={maxsize}")
        self.func, self.cost, self.max_bytes, self.maxsize = func, cost, max_bytes, maxsize
        self.entries: OrderedDict[tuple, tuple[Any, int]] = OrderedDict()
        self.lock = threading.Lock()
        self.counts = [0, 0]  # hits, misses
        self.nbytes = 0

    def compute(self, args: tuple) -> Any:
        """A miss: the result worked out outside the lock, then held unless it alone is over the budget."""
        result = self.func(*args)
        cost = self.cost(args, result)
        if cost > self.max_bytes:
            return result
        with self.lock:
            old = self.entries.pop(args, None)
            if old is not None:
                self.nbytes -= old[1]
            self.entries[args] = (result, cost)
            self.nbytes += cost
            while self.nbytes > self.max_bytes or (self.maxsize is not None and len(self.entries) > self.maxsize):
                _, (_, dropped) = self.entries.popitem(last=False)
                self.nbytes -= dropped
        return result

    def cache_info(self) -> MemoInfo:
        with self.lock:
            return MemoInfo(*self.counts, self.maxsize, len(self.entries), self.nbytes, self.max_bytes)

    def cache_clear(self) -> None:
        with self.lock:
            self.entries.clear()
            self.nbytes = 0
            self.counts[:] = [0, 0]


def byte_lru(*, max_bytes: int, cost: Callable[[tuple, Any], int], maxsize: int | None = None
             ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: `func` memoised in a `ByteLRU` of `max_bytes` (and at most `maxsize` entries when given); the
    memoised function has lru_cache's `cache_info()` (with `nbytes` and `max_bytes`) and `cache_clear()`, and its
    `ByteLRU` as `.memo`."""

    def decorate(func: Callable[..., Any]) -> Callable[..., Any]:
        memo = ByteLRU(func, max_bytes=max_bytes, cost=cost, maxsize=maxsize)
        lock, counts, get, move_to_end, compute = memo.lock, memo.counts, memo.entries.get, memo.entries.move_to_end, \
            memo.compute

        def memoised(*args: Any) -> Any:
            with lock:
                held = get(args)
                if held is not None:
                    move_to_end(args)
                    counts[0] += 1
                    return held[0]
                counts[1] += 1
            return compute(args)

        functools.update_wrapper(memoised, func)
        memoised.memo = memo  # type: ignore[attr-defined]
        memoised.max_bytes = max_bytes  # type: ignore[attr-defined]
        memoised.cache_info = memo.cache_info  # type: ignore[attr-defined]
        memoised.cache_clear = memo.cache_clear  # type: ignore[attr-defined]
        return memoised

    return decorate


class LruDict:
    """A mapping that holds at most `maxsize` entries: setting one more drops the least recently set or read (`get`)
    entry. For the per-file caches of memory/store.py, which are hints and shortcuts (a dropped entry is read again
    from the file), so what they hold follows the files a process met lately, not every file it ever read. One lock
    around each step (gunicorn's request threads and the watcher share a worker's caches)."""

    __slots__ = ("_entries", "_lock", "maxsize")

    def __init__(self, maxsize: int) -> None:
        if maxsize <= 0:
            raise ValueError(f"LruDict needs a positive maxsize, got {maxsize}")
        self.maxsize = maxsize
        self._entries: OrderedDict[Any, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            value = self._entries.get(key, _MISSING)
            if value is _MISSING:
                return default
            self._entries.move_to_end(key)
            return value

    def __setitem__(self, key: Any, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)

    def pop(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            return self._entries.pop(key, default)

    def __delitem__(self, key: Any) -> None:
        with self._lock:
            del self._entries[key]

    def __contains__(self, key: Any) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_MISSING = object()


# The budgets of memory's ranking text caches (memory/ranking/features.py), estimated bytes per process (with
# stem's bound 15.75 MiB; docs/benchmarks.md "Serve tree RSS", session 21): a memory's tokenised text (`_doc`: its
# stems as one spaced string since session 23, ~620 bytes an entry on the soak's store, so 5 MiB holds ~8,000), a long
# memory's (`_long_doc`, keyed by a digest of the text), a title's stems. `stem` keeps functools' C lru_cache (it runs
# for every word) with an entry bound that is a byte bound: STEM_CACHE words of at most STEM_CACHE_CHARS characters,
# ~288 bytes an entry at most (key, result, link, dict slot): 2.25 MiB. LONG_DOC_BYTES holds the 41 long pages of the
# dev stores (6.5 MiB estimated; at 4 MiB they were tokenised again and again: whisper dev CPU 34 -> 90 s).
DOC_BYTES = 5 * 1024 * 1024
LONG_DOC_BYTES = 8 * 1024 * 1024
TITLE_STEMS_BYTES = 512 * 1024
STEM_CACHE = 8_192
STEM_CACHE_CHARS = 24
STEM_ENTRY_BYTES = 288
