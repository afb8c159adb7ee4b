"""Where the graph explorer last drew each memory, kept on the server between visits (a cache, never the truth).

One JSON file in ORMAH_HOME (ui/graph-positions.json): memory id -> [x, y]. The explorer lays out only the
memories without a position (new ones, or all of them on a first visit) and sends back what it drew; a big graph's
first layout is made here instead (positions_for_graph, ormah_site/ui/layout.py). Losing the file costs one layout;
a corrupt file is ignored and replaced.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from memory.conf import get_conf
from ormah_site.ui.layout import LAYOUT_ABOVE, graph_layout, graph_parts

logger = logging.getLogger(__name__)
MAX_POSITIONS = 50_000
KNOWN_SHARE = 0.6  # static/ui/graph.js: with this share of the shown memories placed, only the others are placed
_lock = threading.Lock()


def _path() -> Path:
    return get_conf().home / "ui" / "graph-positions.json"


def positions_load() -> dict[str, list[float]]:
    """Every cached position (empty when there is no cache or it cannot be read)."""
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def positions_kept() -> bool:
    """Whether any position is cached (a later visit: the explorer can draw without running the layout)."""
    try:
        return _path().stat().st_size > 2
    except OSError:
        return False


def positions_for(ids: list[str]) -> dict[str, list[float]]:
    """The cached positions of these memories."""
    cached = positions_load()
    return {i: cached[i] for i in ids if i in cached}


def _valid(value: object) -> list[float] | None:
    if not isinstance(value, list | tuple) or len(value) != 2:
        return None
    try:
        x, y = float(value[0]), float(value[1])
    except (TypeError, ValueError):
        return None
    return [round(x, 1), round(y, 1)] if math.isfinite(x) and math.isfinite(y) else None


def positions_save(*, positions: dict, forget: list[str] | None = None) -> int:
    """Merge drawn positions into the cache (dropping `forget`); returns how many were stored. Atomic write."""
    clean = {str(k)[:64]: v for k, v in ((k, _valid(v)) for k, v in positions.items()) if v is not None}
    with _lock:
        cached = positions_load()
        for key in forget or []:
            cached.pop(key, None)
        cached.update(clean)
        if len(cached) > MAX_POSITIONS:
            cached = dict(list(cached.items())[-MAX_POSITIONS:])
        path = _path()
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".positions-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(cached, handle, separators=(",", ":"))
            os.replace(tmp, path)
        except OSError:
            logger.warning("Could not save graph positions to %s", path, exc_info=True)
            Path(tmp).unlink(missing_ok=True)
            return 0
    return len(clean)


@dataclass(frozen=True)
class GraphPositions:
    """Positions for the memories shown, and whether the server laid them out for this answer."""

    pos: dict[str, list[float]]
    computed: bool


def positions_for_graph(*, nodes: list[dict], edges: list[list]) -> GraphPositions:
    """The cached positions of an exported graph; for a big graph with most of them missing, a layout made here.

    When fewer than KNOWN_SHARE of the memories have a position the explorer lays out the whole graph; above
    LAYOUT_ABOVE memories in its core that is fcose's spectral draft, which ormah_site.ui.layout computes in tens of
    milliseconds instead of the page's 0.8-1 s. Those positions are saved (the next visit reads them) and returned.
    """
    ids = [n["id"] for n in nodes]
    cached = positions_for(ids)
    if len(cached) >= KNOWN_SHARE * len(ids):
        return GraphPositions(pos=cached, computed=False)
    parts = graph_parts(nodes=nodes, edges=edges)
    if parts.core_size <= LAYOUT_ABOVE:
        return GraphPositions(pos=cached, computed=False)
    pos = graph_layout(parts)
    positions_save(positions=pos)
    return GraphPositions(pos=pos, computed=True)
