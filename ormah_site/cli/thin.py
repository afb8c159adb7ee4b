"""The commands an agent or a person runs all day, as API calls: instant while `ormah serve` runs.

Each builds the API request from the parsed options, sends it through `client.call` (the server, else the same
API in-process) and prints the answer with `render`. No Django, no model on the server path.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import urllib.parse

from ormah_site.cli import render
from ormah_site.cli.client import ApiError, call

GLOBAL = "global"


def _list(value: str | None) -> list[str] | None:
    items = [v.strip() for v in (value or "").split(",") if v.strip()]
    return items or None


def _ref(value: str) -> str:
    """A memory's id or prefix as one path segment; one with a slash can match no route, so it is refused here with
    the API's own words (the server would answer "No such route")."""
    ref = value.strip()
    if "/" in ref:
        raise ApiError(422, "validation_failed",
                       f"'{ref}' is not a node id or an id prefix of at least 4 hex characters")
    return urllib.parse.quote(ref, safe="")


def _default_space(given: str | None) -> str | None:
    return given or (os.environ.get("ORMAH_SPACE") or "").strip() or None


def remember(o: argparse.Namespace) -> str:
    content = sys.stdin.read().removeprefix("\ufeff") if o.content == "-" else o.content  # a file saved with a BOM
    body = {"content": content, "title": o.title, "type": o.type, "tier": o.tier, "space": o.space,
            "tags": _list(o.tags) or [], "about_self": o.about_self, "confidence": o.confidence,
            "source": o.source, "session_id": o.session}
    data = call("POST", "/agent/remember", body)
    return json.dumps(data) if o.json else render.remembered(data)


def recall(o: argparse.Namespace) -> str:
    spaces = _list(o.spaces)
    body = {"query": o.query, "limit": o.limit, "types": _list(o.types), "tiers": _list(o.tiers),
            "spaces": [None if s == GLOBAL else s for s in spaces] if spaces else None, "tags": _list(o.tags),
            "created_after": o.after, "created_before": o.before, "default_space": _default_space(o.space),
            "include_outdated": o.history, "format": "json" if o.json else "text", "full": o.full}
    try:
        data = call("POST", "/agent/recall", body)
    except ApiError as exc:  # the API names its fields; the person typed options
        exc.message = re.sub(r"^created_(after|before):", r"--\1:", exc.message)
        raise
    return json.dumps(data["results"]) if o.json else data["text"].rstrip("\n")


def show(o: argparse.Namespace) -> str:
    data = call("GET", f"/agent/nodes/{_ref(o.node_id)}", query={"use": "false"})
    node = data["node"]
    return render.shown_json(node) if o.json else render.node_text(node)


def forget(o: argparse.Namespace) -> str:
    if o.restore:
        node = call("POST", f"/agent/nodes/{_ref(o.node_id)}/restore")
        return f"Restored {node['id']}"
    node = call("DELETE", f"/agent/nodes/{_ref(o.node_id)}")
    return f"Forgot {node['id']} (restore with: ormah forget --restore {node['id']})"


def connect(o: argparse.Namespace) -> str:
    data = call("POST", "/agent/connect", {"source_id": o.source_id, "target_id": o.target_id, "edge": o.edge,
                                           "weight": o.weight, "reason": o.reason})
    return f"Connected {data['source_id'][:8]} -[{data['edge']}]-> {data['target_id'][:8]}"


def outdated(o: argparse.Namespace) -> str:
    node = call("POST", f"/agent/nodes/{_ref(o.node_id)}/outdated", {"reason": o.reason})
    return f"Marked {node['id']} outdated"


def self_(o: argparse.Namespace) -> str:
    data = call("GET", "/agent/self", query={"space": o.space, "limit": o.limit})
    return json.dumps(data) if o.json else render.self_text(data)


def context_pack(o: argparse.Namespace) -> str:
    body = {"query": o.query, "budget_tokens": o.budget, "policy": o.policy, "scope": o.scope,
            "workspace": {"path": o.workspace} if o.workspace else None, "session_id": o.session,
            "default_space": _default_space(o.space)}
    data = call("POST", "/agent/context-pack", body)
    return json.dumps(data) if o.json else render.pack_text(data)


COMMANDS = {"remember": remember, "recall": recall, "show": show, "forget": forget, "connect": connect,
            "outdated": outdated, "self": self_, "context-pack": context_pack}
