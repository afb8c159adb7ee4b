"""Node <-> markdown file text: YAML front matter (keys sorted, block style), a blank line, the content.

Where this format differs from the original Ormah's:
- Connections keep their `reason` (upstream dropped edge reasons on a round trip, issue #193).
- Unknown front-matter keys (a newer version's `superseded_by`, ...) are kept in Node.extra and written back.
- Timestamps always carry six microsecond digits and `Z` (upstream omitted zero microseconds).
- The body is verbatim: one blank line after `---` and one final newline are framing, the rest is content
  (upstream stripped it), so any str round-trips, leading newlines and carriage returns included.
- Strings with line breaks are written double-quoted on one line, so no front-matter line can read as `---`.
- Parsing is stricter: confidence, importance, weights finite in [0, 1], stability > 0, else MalformedNodeFile.
"""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from enum import StrEnum
from typing import Any

import yaml

from memory.domain.enums import EDGE_ALIASES, EdgeType, NodeType, Tier
from memory.domain.node import PROVENANCE_KEYS, RESERVED_KEYS, Connection, Node, Provenance, as_utc
from memory.errors import MalformedNodeFile

PARSE_DEFAULT_STABILITY = 1.0
SPACE_PLACEHOLDERS = frozenset({"", "null", "none"})
MAX_EXTRA_DEPTH = 32
MAX_EXTRA_VALUES = 10_000

_FRONT_MATTER = re.compile(r"\A\ufeff?---[ \t]*\r?\n(.*?)^---[ \t]*(\r?\n|\Z)", re.DOTALL | re.MULTILINE)
_LINE_BREAKS = re.compile("[\r\n\x85\u2028\u2029]")
_YAML_WIDTH = 1 << 30


class _Invalid(Exception):
    """A field-level problem; parse() turns it into MalformedNodeFile with the file's path and the key's line.

    Messages name the key and what kind of value was found, never the value: a malformed file's reason goes
    to logs, /api/admin/health and doctor, and the file may hold secrets.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


def _kind(value: Any) -> str:
    """What a YAML value is, without what it says."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    return "a " + type(value).__name__


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


def _dump(data: dict[str, Any]) -> str:
    return yaml.dump(
        data, Dumper=_Dumper, sort_keys=True, allow_unicode=True, default_flow_style=False, width=_YAML_WIDTH,
    )


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
        data = yaml.safe_load(match.group(1))
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError) as exc:
        raise MalformedNodeFile(path=source, reason=_yaml_reason(exc)) from None
    if not isinstance(data, dict):
        raise MalformedNodeFile(path=source, reason="front matter is not a mapping")
    try:
        node = _node_from(data, _body(text[match.end():], match.group(2)))
    except _Invalid as exc:
        line = _key_line(match.group(1), exc.key)
        raise MalformedNodeFile(path=source, reason=f"{exc} (line {line})" if line else str(exc)) from None
    return node


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


def _node_from(data: dict[Any, Any], content: str) -> Node:
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise _Invalid(f"front-matter keys must be strings, got {_kind(bad_keys[0])}")
    created = _datetime(data, "created")
    if created is None:
        raise _Invalid("missing 'created'")
    updated = _datetime(data, "updated") or created
    extra = {k: v for k, v in data.items() if k not in RESERVED_KEYS}
    _check_extra(extra)
    return Node(
        id=_node_id(data.get("id")),
        type=_enum(NodeType, data, "type", None),
        tier=_enum(Tier, data, "tier", Tier.WORKING),
        content=content,
        created=created,
        updated=updated,
        last_accessed=_datetime(data, "last_accessed") or updated,
        title=_text(data, "title"),
        space=_space(data),
        space_locked=_bool(data, "space_locked"),
        tags=_tags(data.get("tags")),
        source=_text(data, "source") if data.get("source") is not None else "agent:unknown",
        connections=_connections(data.get("connections")),
        confidence=_number(data, "confidence", 1.0, unit=True),
        importance=_number(data, "importance", 0.5, unit=True),
        access_count=_count(data, "access_count"),
        last_review=_datetime(data, "last_review"),
        valid_until=_datetime(data, "valid_until"),
        stability=_stability(data),
        deleted_at=_datetime(data, "deleted_at"),
        source_event_ids=_strings(data.get("source_event_ids"), "source_event_ids"),
        provenance=Provenance(**{key: _text(data, key) for key in PROVENANCE_KEYS}),
        pinned=_bool(data, "pinned"),
        authority=_count(data, "authority"),
        read_only=_bool(data, "read_only"),
        extra=extra,
    )


def _check_extra(extra: Mapping[str, Any]) -> None:
    """Bound unknown keys so copying, comparing and re-rendering them stays cheap (no alias bombs, no cycles)."""
    stack = [(value, 1) for value in extra.values()]
    seen = 0
    while stack:
        value, depth = stack.pop()
        seen += 1
        if depth > MAX_EXTRA_DEPTH or seen > MAX_EXTRA_VALUES:
            raise _Invalid(
                f"unknown keys nest deeper than {MAX_EXTRA_DEPTH} or hold more than {MAX_EXTRA_VALUES} values",
            )
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, set)):
            stack.extend((v, depth + 1) for v in value)


def _node_id(value: Any) -> str:
    if value is None:
        raise _Invalid("missing 'id'")
    if not isinstance(value, str):
        raise _Invalid(f"'id' must be a UUID string, got {_kind(value)}", "id")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise _Invalid("'id' is not a UUID", "id") from None


def _enum(kind: type[StrEnum], data: Mapping[str, Any], key: str, default: Any) -> Any:
    value = data.get(key)
    if value is None:
        if default is None:
            raise _Invalid(f"missing '{key}'", key)
        return default
    if isinstance(value, str) and value in kind.__members__.values():
        return kind(value)
    allowed = ", ".join(m.value for m in kind)
    raise _Invalid(f"unknown {key} (expected one of: {allowed})", key)


def _scalar_text(value: Any, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise _Invalid(f"'{key}' must be a string, got {_kind(value)}", key)


def _text(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return None if value is None else _scalar_text(value, key)


def _space(data: Mapping[str, Any]) -> str | None:
    value = _text(data, "space")
    if value is None or value.strip().lower() in SPACE_PLACEHOLDERS:
        return None
    return value


def _bool(data: Mapping[str, Any], key: str) -> bool:
    value = data.get(key)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise _Invalid(f"'{key}' must be true or false, got {_kind(value)}", key)
    return value


def _tags(value: Any) -> tuple[str, ...]:
    return _strings(value, "tags")


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise _Invalid(f"'{key}' must be a list, got {_kind(value)}", key)
    return tuple(_scalar_text(item, key) for item in value)


def _connections(value: Any) -> tuple[Connection, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise _Invalid("'connections' must be a list", "connections")
    conns = []
    for item in value:
        if not isinstance(item, dict):
            raise _Invalid(f"each connection must be a mapping, got {_kind(item)}", "connections")
        target = item.get("target")
        if not isinstance(target, str) or not target:
            raise _Invalid("a connection without a target", "connections")
        edge = item.get("edge")
        conns.append(Connection(
            target=target,
            edge=EDGE_ALIASES[edge] if isinstance(edge, str) and edge in EDGE_ALIASES else
            _enum(EdgeType, item, "edge", EdgeType.RELATED_TO),
            weight=_number(item, "weight", 0.5, unit=True),
            reason=_text(item, "reason"),
            valid_from=_datetime(item, "valid_from"),
            valid_until=_datetime(item, "valid_until"),
            source_event_ids=_strings(item.get("source_event_ids"), "source_event_ids"),
        ))
    return tuple(conns)


def _number(data: Mapping[str, Any], key: str, default: float, *, unit: bool = False) -> float:
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _Invalid(f"'{key}' must be a number, got {_kind(value)}", key)
    try:
        number = float(value)
    except OverflowError:
        raise _Invalid(f"'{key}' is out of range", key) from None
    if not math.isfinite(number):
        raise _Invalid(f"'{key}' must be finite", key)
    if unit and not 0.0 <= number <= 1.0:
        raise _Invalid(f"'{key}' must be between 0 and 1", key)
    return number


def _stability(data: Mapping[str, Any]) -> float:
    value = _number(data, "stability", PARSE_DEFAULT_STABILITY)
    if value <= 0:
        raise _Invalid("'stability' must be positive", "stability")
    return value


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _Invalid(f"'{key}' must be a whole number >= 0", key)
    return value


def _datetime(data: Mapping[str, Any], key: str) -> datetime | None:
    value = data.get(key)
    if value is None:
        return None
    try:
        if isinstance(value, datetime):
            return as_utc(value)
        if isinstance(value, date):
            return datetime.combine(value, time(), UTC)
        if isinstance(value, str):
            return as_utc(datetime.fromisoformat(value.strip()))
    except (ValueError, OverflowError):
        pass
    raise _Invalid(f"'{key}' is not an ISO-8601 datetime (got {_kind(value)})", key)
