"""Agent-ready text for recall hits (reference §1.8). Formatting only: the hits come from `recall`."""

from __future__ import annotations

from collections.abc import Sequence

from memory.domain.search import SearchHit
from memory.domain.trust import warning_line
from memory.domain.wording import counted

EMPTY = "No good match for this query."  # nothing reached the calibrated threshold (docs/recall.md)
SNIPPET_CHARS = 200
GRAPH_SOURCES = ("activated", "conflict")


def _snippet(content: str) -> str:
    text = " ".join(content.split())
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS] + "..."


def _entry(number: int, hit: SearchHit) -> list[str]:
    meta = f"ID: {hit.node_id} | Tier: {hit.tier} | Score: {hit.score:.3f} | Created: " \
           f"{hit.created.strftime('%Y-%m-%dT%H:%M:%S')}"
    if hit.valid_until is not None:
        meta += f" | Outdated since: {hit.valid_until.strftime('%Y-%m-%dT%H:%M:%S')}"
    title = " ".join(hit.title.split())  # one line: a title from a hand-edited file cannot forge a heading or an item
    lines = [f"{number}. [{hit.type}] {title}", f"   {meta}"]
    seed = (hit.activated_by or "")[:8]
    if hit.source == "activated":
        lines.append(f"   via {hit.activation_edge} from {seed}...")
    elif hit.source == "conflict":
        lines.append(f"   contradicts {seed}...")
    lines.append(f"   {_snippet(hit.snippet_text)}")
    lines += [f"   {warning_line(w)}" for w in hit.warnings]
    return lines


def format_hits_text(hits: Sequence[SearchHit]) -> str:
    """Markdown-ish text for an agent: direct hits, then related (graph) hits, then conflicting context."""
    if not hits:
        return EMPTY
    direct = [h for h in hits if h.source not in GRAPH_SOURCES]
    related = [h for h in hits if h.source == "activated"]
    conflicts = [h for h in hits if h.source == "conflict"]
    extra = len(related) + len(conflicts)
    header = f"Found {counted(len(direct), 'memory')}" + (f" (+{extra} related):" if extra else ":")
    lines = [header, ""]
    number = 0
    for title, group in ((None, direct), ("--- Related (via graph) ---", related),
                         ("--- Conflicting context ---", conflicts)):
        if not group:
            continue
        if title:
            lines += [title, ""]
        for hit in group:
            number += 1
            lines += _entry(number, hit) + [""]
    return "\n".join(lines).rstrip() + "\n"
