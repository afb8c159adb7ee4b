"""Node <-> markdown file text: YAML front matter (keys sorted, block style), a blank line, the content.

Where this format differs from the original Ormah's:
- Connections keep their `reason` (upstream dropped edge reasons on a round trip, issue #193).
- Unknown front-matter keys (a newer version's `superseded_by`, ...) are kept in Node.extra and written back.
- Timestamps always carry six microsecond digits and `Z` (upstream omitted zero microseconds).
- The body is verbatim: one blank line after `---` and one final newline are framing, the rest is content
  (upstream stripped it), so any str round-trips, leading newlines and carriage returns included.
- Strings with line breaks are written double-quoted on one line, so no front-matter line can read as `---`.
- Parsing is stricter: confidence, importance, weights finite in [0, 1], stability > 0, else MalformedNodeFile.

This module frames the file (front matter, body) and reads and writes its YAML; memory.domain.front_matter turns
the parsed front matter into a Node, key by key.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

import yaml

from memory.domain.front_matter import InvalidField, node_from
from memory.domain.node import PROVENANCE_KEYS, Connection, Node, as_utc
from memory.errors import MalformedNodeFile

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*(\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")
_YAML_WIDTH = 1 << 30


# ---------------------------------------------------------------------------
# Render
# ---------------------------------------------------------------------------

class _Dumper(yaml.SafeDumper):
    """SafeDumper that keeps every string on one line."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if _LINE_BREAKS.search(value):
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_str(value)


_Dumper.add_representer(str, _represent_str)


_CSafeDumper = getattr(yaml, "CSafeDumper", None)  # libyaml's emitter, when PyYAML was built with it
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}\Z")


class _FastDumper(_CSafeDumper or _Dumper):  # type: ignore[misc]
    """The same dump through libyaml's emitter: ~5x less CPU per file than PyYAML's pure-Python one."""


_FastDumper.add_representer(str, _represent_str)


def _dump(data: dict[str, Any]) -> str:
    """libyaml writes the same bytes as PyYAML's emitter except for characters beyond the BMP (it escapes them as
    `\\U0001F642`, PyYAML writes them as they are) and keys that are not plain names (it may make them complex
    `? ` keys), so those take the pure-Python emitter (tests/domain/test_markdown_emitters.py compares both)."""
    if _CSafeDumper is not None and _plain_keys(data):
        text = _dump_with(data, _FastDumper)
        if "\\U" not in text:
            return text
    return _dump_with(data, _Dumper)


def _dump_with(data: dict[str, Any], dumper: type) -> str:
    return yaml.dump(data, Dumper=dumper, sort_keys=True, allow_unicode=True, default_flow_style=False,
                     width=_YAML_WIDTH)


def _plain_keys(value: Any) -> bool:
    if isinstance(value, dict):
        return all(isinstance(k, str) and _PLAIN_KEY.match(k) and _plain_keys(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_plain_keys(v) for v in value)
    return True


def format_timestamp(value: datetime) -> str:
    """ISO-8601 in UTC with microseconds and `Z`, e.g. 2026-07-01T10:00:00.123456Z."""
    return as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"


def render(node: Node) -> str:
    """The markdown file text for a node (front matter, blank line, content, one final newline)."""
    data: dict[str, Any] = dict(node.extra)
    data.update({
        "id": node.id,
        "type": node.type.value,
        "tier": node.tier.value,
        "source": node.source,
        "created": format_timestamp(node.created),
        "updated": format_timestamp(node.updated),
        "last_accessed": format_timestamp(node.last_accessed),
        "access_count": node.access_count,
        "confidence": float(node.confidence),
        "importance": float(node.importance),
        "stability": float(node.stability),
    })
    for key in ("last_review", "valid_until", "deleted_at"):
        value = getattr(node, key)
        if value is not None:
            data[key] = format_timestamp(value)
    if node.title is not None:
        data["title"] = node.title
    if node.space is not None:
        data["space"] = node.space
    if node.space_locked:
        data["space_locked"] = True
    if node.tags:
        data["tags"] = list(node.tags)
    if node.connections:
        data["connections"] = [_connection_data(c) for c in node.connections]
    data.update(_trust_data(node))
    return f"---\n{_dump(data)}---\n\n{node.content}\n"


def _trust_data(node: Node) -> dict[str, Any]:
    """The trust keys (docs/trust.md), each written only when set."""
    data: dict[str, Any] = {}
    if node.source_event_ids:
        data["source_event_ids"] = list(node.source_event_ids)
    for key in PROVENANCE_KEYS:
        value = getattr(node.provenance, key)
        if value is not None:
            data[key] = value
    if node.pinned:
        data["pinned"] = True
    if node.read_only:
        data["read_only"] = True
    if node.authority:
        data["authority"] = node.authority
    return data


def _connection_data(conn: Connection) -> dict[str, Any]:
    data: dict[str, Any] = {"edge": conn.edge.value, "target": conn.target, "weight": float(conn.weight)}
    if conn.reason is not None:
        data["reason"] = conn.reason
    for key in ("valid_from", "valid_until"):
        value = getattr(conn, key)
        if value is not None:
            data[key] = format_timestamp(value)
    if conn.source_event_ids:
        data["source_event_ids"] = list(conn.source_event_ids)
    return data


# ---------------------------------------------------------------------------
# Parse
# ---------------------------------------------------------------------------

def parse(text: str, *, source: str = "<string>") -> Node:
    """The node a markdown file holds; raises MalformedNodeFile(path=source, reason=...) for anything unusable."""
    match = _FRONT_MATTER.match(text)
    if match is None:
        reason = "front matter is not closed" if text.lstrip("\ufeff").startswith("---") else "no front matter"
        raise MalformedNodeFile(path=source, reason=reason)
    try:
        data = _load(match.group(1))
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:
        raise MalformedNodeFile(path=source, reason=_yaml_reason(exc)) from None
    if not isinstance(data, dict):
        raise MalformedNodeFile(path=source, reason="front matter is not a mapping")
    try:
        node = node_from(data, _body(text[match.end():], match.group(2)))
    except InvalidField as exc:
        line = _key_line(match.group(1), exc.key)
        raise MalformedNodeFile(path=source, reason=f"{exc} (line {line})" if line else str(exc)) from None
    return node


_CSafeLoader = getattr(yaml, "CSafeLoader", None)  # libyaml's parser, when PyYAML was built with it
_NON_PRINTABLE = yaml.reader.Reader.NON_PRINTABLE


def _load(front: str) -> Any:
    """The front matter's data, parsed by libyaml (~10x less CPU than PyYAML's pure-Python parser; the same
    constructor and resolver turn its events into values). Anything libyaml refuses, and any text holding a
    character PyYAML's reader refuses, goes through `yaml.safe_load` itself, so a malformed file gets exactly
    the error it always got (tests/domain/test_markdown_loaders.py compares both parsers)."""
    if _CSafeLoader is not None and not _NON_PRINTABLE.search(front):
        try:
            return yaml.load(front, Loader=_CSafeLoader)  # noqa: S506 (a safe loader)
        except (yaml.YAMLError, ValueError, OverflowError, RecursionError):
            pass
    return yaml.safe_load(front)


def _yaml_reason(exc: BaseException) -> str:
    """The YAML error's kind and line (the front matter starts on line 2), without the text it quotes."""
    problem = getattr(exc, "problem", None)
    mark = getattr(exc, "problem_mark", None)
    kind = " ".join(str(problem).split())[:120] if problem else type(exc).__name__
    kind = re.sub(r"'[^']*'|\"[^\"]*\"", "'…'", kind)
    return f"invalid YAML: {kind}" + (f" (line {mark.line + 2})" if mark is not None else "")


def _key_line(front: str, key: str | None) -> int | None:
    if not key:
        return None
    found = re.search(rf"^{re.escape(key)}[ \t]*:", front, re.MULTILINE)
    return front.count("\n", 0, found.start()) + 2 if found else None


def _body(rest: str, newline: str) -> str:
    newline = newline or "\n"
    if rest.startswith(newline):
        rest = rest[len(newline):]
    if rest.endswith(newline):
        rest = rest[: -len(newline)]
    return rest
