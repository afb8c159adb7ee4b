"""What the MCP tools answer: short text an agent reads, rendered from the API's JSON (no Django)."""

from __future__ import annotations

from datetime import datetime

from maintenance.detectors.facts import ProposalKind
from memory.domain.requests import auto_title
from memory.domain.wording import counted

EDITABLE_KINDS = (ProposalKind.MERGE.value, ProposalKind.CONSOLIDATION.value)  # as maintenance.selectors says
SEEN_DIGITS = 8
HEX = "0123456789abcdef"


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
    if any(p["kind"] in EDITABLE_KINDS for p in rows):
        lines += ["", "A merge or consolidation writes a memory: proposal_result shows its text, and decide_proposal "
                      "can approve it with your corrections."]
    return "\n".join(lines)


def seen_token(seen: dict[str, str]) -> str:
    """The file hashes a result was read from, short enough for an agent to copy: the first 8 hex digits of each
    memory's hash, in the order of their ids."""
    return "-".join(seen[uid][:SEEN_DIGITS] for uid in sorted(seen))


def seen_changes(token: str, seen: dict[str, str]) -> list[str] | None:
    """The ids of the memories whose file differs from `token` (seen_token of what the agent read), given the
    hashes now; None when the token cannot be of this proposal (another count of memories)."""
    parts = token.strip().lower().split("-")
    uids = sorted(seen)
    if len(parts) != len(uids) or any(len(p) != SEEN_DIGITS or p.strip(HEX) for p in parts):
        return None
    return [uid for uid, part in zip(uids, parts) if seen[uid][:SEEN_DIGITS] != part]


def proposal_result_text(data: dict) -> str:
    short = data["proposal_id"][:8]
    token = seen_token(data["seen"])
    tags = ", ".join(map(one_line, data["tags"])) or "none"
    kept = f" (kept whatever you send: {', '.join(data['kept_tags'])})" if data["kept_tags"] else ""
    return "\n".join([
        f"Approving proposal {short} ({data['kind']}) writes this memory:",
        f"Title: {one_line(data['title']) or '(none)'}", f"Tags: {tags}{kept}", "", data["content"], "",
        f'To approve it as shown: decide_proposal(proposal_id="{short}", action="approve", seen="{token}"). To '
        "approve it corrected, add title, content and/or tags (a field left out stays as shown)."])


def changed_text(proposal_id: str, changed: list[dict]) -> str:
    """Why an approval was refused: which memories changed since the agent read the result (nothing applied)."""
    def what(item: dict) -> str:
        title = f" ({one_line(item['title'])})" if item.get("title") else ""
        return f"memory {item['id'][:8]}{title} " + ("is gone (forgotten or merged)" if item.get("gone") else
                                                    "changed")
    return (f"Nothing was applied: {', '.join(map(what, changed))} since you read proposal {proposal_id[:8]}'s "
            "result. The proposal is still pending: call proposal_result to read what approving writes now, then "
            "decide_proposal again with its new seen.")
