"""What the MCP tools answer: short text an agent reads, rendered from the API's JSON (no Django)."""

from __future__ import annotations

from datetime import datetime

from memory.domain.requests import auto_title
from memory.domain.wording import counted


def one_line(text: str | None) -> str:
    """A file's title, space or tag on one line: with line breaks (a hand-edited or synced file) it could forge a
    heading or an item in what the agent reads."""
    return " ".join((text or "").split())


def title_of(item: dict) -> str:
    return one_line(item.get("title") or auto_title(item.get("content", "")))


def remembered_text(data: dict) -> str:
    node = data["node"]
    if data.get("existing"):
        return (f"Already remembered (identical content; nothing new was stored) [{node['type']}]: {title_of(node)}\n"
                f"ID: {node['id']}\nUse update_memory to change it.")
    lines = [f"Remembered [{node['type']}]: {title_of(node)}", f"ID: {node['id']}"]
    links = data.get("auto_links") or []
    if links:
        lines.append(f"Auto-linked to {len(links)} related memories:")
        lines += [f"  → {title_of(link)} ({link['similarity']:.0%} similar)" for link in links]
    return "\n".join(lines)


def node_text(data: dict) -> str:
    node = data["node"]
    lines = [f"## [{node['type']}] {title_of(node)}", f"ID: {node['id']}",
             f"Tier: {node['tier']} | Space: {one_line(node['space']) or 'global'} | Created: {node['created'][:19]}"]
    if node.get("tags"):
        lines.append("Tags: " + ", ".join(map(one_line, node["tags"])))
    if node.get("valid_until"):
        lines.append(f"Outdated since {node['valid_until'][:19]}")
    lines += ["", node["content"]]
    edges = [("→", e) for e in data.get("edges_out", [])] + [("←", e) for e in data.get("edges_in", [])]
    if edges:
        lines += ["", "### Connections"]
        lines += [f"{arrow} {e['edge']} ({e['weight']:.1f}) {e['node']['id']}  {title_of(e['node'])}"
                  for arrow, e in edges]
    return "\n".join(lines)


def self_text(data: dict) -> str:
    node = data["node"]
    lines = [f"## Self: {title_of(node)}", node["content"]]
    defined = data.get("defines") or []
    if defined:
        lines += ["", f"### What defines them ({len(defined)})"]
        lines += [f"- [{m['type']}] {title_of(m)}: {' '.join(m['content'][:200].split())} (id: {m['short_id']})"
                  for m in defined]
    else:
        lines += ["", "No identity memories yet; remember facts about the user with about_self=true."]
    return "\n".join(lines)


def context_pack_text(data: dict) -> str:
    footer = f"-- {data['estimated_tokens']}/{data['budget_tokens']} tokens, {counted(len(data['items']), 'item')}"
    return (data["text"].rstrip("\n") + "\n" + footer) if data["items"] else "Nothing to pack.\n" + footer


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None



def listed_text(data: dict) -> str:
    rows = data["results"]
    if not rows:
        return "No memories match."
    lines = [f"{counted(len(rows), 'memory')}, newest first:", ""]
    for r in rows:
        when = r["updated"][:16].replace("T", " ")
        lines.append(f"- [{r['type']}] {title_of(r)} (id: {r['short_id']}, {one_line(r['space']) or 'global'}, {when})")
        lines.append(f"  {r['content'][:200]}")
    if data.get("next_cursor"):
        lines += ["", f"More: call list_recent with cursor=\"{data['next_cursor']}\""]
    return "\n".join(lines)


def proposals_text(rows: list[dict]) -> str:
    if not rows:
        return "No proposals waiting for review."
    lines = [f"{counted(len(rows), 'proposal')}:", ""]
    for p in rows:
        nodes = ", ".join(f"{n.get('short_id') or str(n.get('id', ''))[:8]} {' '.join((n.get('title') or '').split())}"
                          .strip() for n in p["nodes"])
        lines.append(f"- {p['id'][:8]} [{p['kind']}, {p['status']}] {p['action_summary']}")
        lines.append(f"  why: {p['reason']} | memories: {nodes}")
    return "\n".join(lines)
