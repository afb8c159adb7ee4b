"""The byte budgets of whisper's per-process text caches (issue 13, session 20). The byte-bounded LRU itself lives in
memory/memo.py since session 21 (memory's ranking caches use it too, and memory imports no whisper); its names are
re-exported here for whisper's modules.
"""

from __future__ import annotations

from memory.memo import ENTRY_BYTES, ByteLRU, MemoInfo, args_cost, byte_lru

__all__ = [
    "ENTRY_BYTES", "ByteLRU", "MemoInfo", "args_cost", "byte_lru", "FOLD_BYTES", "TOPIC_BYTES", "PAGE_TOPIC_BYTES",
    "MEMORY_WORDS_BYTES", "PAGE_MEMORY_WORDS_BYTES", "SPACE_WORDS_BYTES",
]

# The budgets of whisper's text caches, estimated bytes per process (together 8 MiB; docs/whisper.md, "Per-process
# text caches"): whisper.text's `fold`, `_topic_tokens` and its page cache, whisper.stages.scoring's `memory_words`,
# its page cache and `_space_words`.
FOLD_BYTES = 768 * 1024
TOPIC_BYTES = 2_304 * 1024
PAGE_TOPIC_BYTES = 2_304 * 1024
MEMORY_WORDS_BYTES = 2_048 * 1024
PAGE_MEMORY_WORDS_BYTES = 512 * 1024
SPACE_WORDS_BYTES = 256 * 1024

