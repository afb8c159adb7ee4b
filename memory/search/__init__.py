"""Recall: the only package with FTS and vector SQL.

`recall` is the pipeline; `fts_search`, `vector_search` and `fuse` are its legs, public so the benchmark can
score each one alone; `format_hits_text` renders hits for an agent.
"""

from memory.search.filters import Filters
from memory.search.formatting import format_hits_text
from memory.search.fts import fts_query, fts_search
from memory.search.hybrid import fuse
from memory.search.pipeline import (
    query_vector, recall, recall_plan, recall_pool, recall_scored, shared_pools,
)
from memory.search.semantic import vector_search

__all__ = [
    "Filters", "format_hits_text", "fts_query", "fts_search", "fuse", "query_vector", "recall", "recall_plan",
    "recall_pool", "recall_scored", "shared_pools", "vector_search",
]
