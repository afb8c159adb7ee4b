"""What "lose nothing" compares: every file's bytes under the memory folder and the derived rows."""

from __future__ import annotations

import hashlib
from pathlib import Path


def files_state(folder: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under the folder (temp files included, so leftovers show)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != ".filler"}


def index_state() -> dict:
    """The derived rows that a write touches, as plain values."""
    from memory.models import EdgeRow, NodeRow, NodeTagRow

    return {
        "nodes": sorted(NodeRow.objects.values_list("uid", "content", "tier", "file_hash", "access_count")),
        "edges": sorted(EdgeRow.objects.values_list("source__uid", "target__uid", "edge_type")),
        "tags": sorted(NodeTagRow.objects.values_list("node__uid", "tag")),
    }
