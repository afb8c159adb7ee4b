"""Which passage of a long memory matched a query: the snippet a hit shows (memory/domain/chunking.py).

The vector leg scores a long memory by its best vector, its own or one of its passages'; for the hits recall
returns, the passage with the best cosine to the query becomes `SearchHit.passage` (start and end in the content),
and every surface shows that text instead of the memory's beginning.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from memory.domain.search import SearchHit
from memory.models import PassageRow
from memory.search import matrix
from memory.search.semantic import uses_matrix


def passage_spans(vector: np.ndarray | None, row_ids: Sequence[int]) -> dict[int, tuple[int, int]]:
    """(start, end) of the best passage of each given row whose best vector is a passage (not its own vector)."""
    if vector is None or not row_ids or not uses_matrix():
        return {}
    best = {row_id: ordinal for row_id, (_, ordinal) in (matrix.cosines(vector, row_ids) or {}).items() if ordinal}
    if not best:
        return {}
    found = PassageRow.objects.filter(node_id__in=list(best)).values_list("node_id", "ordinal", "start", "end")
    return {node_id: (start, end) for node_id, ordinal, start, end in found if best[node_id] == ordinal}


def with_passages(hits: Sequence[SearchHit], vector: Callable[[], np.ndarray | None]) -> list[SearchHit]:
    """The hits, each long memory's carrying the span of the passage that matched the query best (`vector` is
    asked for the query vector only when a hit has passages)."""
    if not hits or not uses_matrix():
        return list(hits)
    long = matrix.with_passages([h.row_id for h in hits])
    spans = passage_spans(vector(), sorted(long)) if long else {}
    return [replace(h, passage=spans[h.row_id]) if h.row_id in spans else h for h in hits]
