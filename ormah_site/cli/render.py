"""Terminal text for the API's answers (the same for the server path and the in-process path)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from memory.domain.requests import auto_title
from memory.domain.wording import counted


def _when(value: str | None) -> str:
    """An API time for people: UTC, labelled so ("2026-11-29 13:20 UTC"); a time without an offset is UTC."""
    if not value:
        return ""
    at = datetime.fromisoformat(value)
    return f"{(at.astimezone(UTC) if at.tzinfo else at):%Y-%m-%d %H:%M} UTC"


def node_text(node: dict) -> str:
    """A compact human rendering of a memory (the API's NodeOut)."""
    lines = [f"[{node['type']}] {node['title'] or auto_title(node['content'])}",
             f"ID: {node['id']} | Tier: {node['tier']} | Space: {node['space'] or 'global'} | "
             f"Created: {_when(node['created'])}"]
    if node.get("tags"):
        lines.append("Tags: " + ", ".join(node["tags"]))
    if node.get("valid_until"):
        lines.append(f"Outdated since {_when(node['valid_until'])}")
    lines += ["", node["content"]]
    if node.get("connections"):
        lines += ["", "Connections:"]
        lines += [f"  -> {c['edge']} ({c['weight']:.2f}) {c['target']}" + (f"  {c['reason']}" if c.get("reason") else "")
                  for c in node["connections"]]
    return "\n".join(lines)


def remembered(data: dict) -> str:
    node = data["node"]
    lines = [f"Remembered [{node['type']}]: {node['title'] or auto_title(node['content'])}", f"ID: {node['id']}"]
    if data["auto_links"]:
        lines.append(f"Auto-linked to {counted(len(data['auto_links']), 'related memory')}:")
        lines += [f"  -> {link['title']} ({link['similarity']:.0%} similar)" for link in data["auto_links"]]
    return "\n".join(lines)


def shown_json(node: dict) -> str:
    return json.dumps({k: node[k] for k in ("id", "type", "tier", "title", "content", "space", "tags")})


def self_text(data: dict) -> str:
    defined = data["defines"]
    lines = [node_text(data["node"]), f"\nDefined by {counted(len(defined), 'memory')}:" if defined else "\nNo identity memories yet."]
    lines += [f"  [{row['type']}] {row['title'] or auto_title(row['content'])}  ({row['short_id']}, {row['tier']})"
              for row in defined]
    return "\n".join(lines)


def pack_text(data: dict) -> str:
    text = data["text"].rstrip("\n") or "Nothing to pack."
    return f"{text}\n-- {data['estimated_tokens']}/{data['budget_tokens']} tokens, {counted(len(data['items']), 'item')}"
