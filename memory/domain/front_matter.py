"""A markdown file's parsed front matter -> Node, key by key (no Django, no I/O).

Each key is read with its type and range checked: a missing or unusable value raises InvalidField naming the key
and the kind of value found, never the value (memory.domain.markdown adds the file's path and the key's line).
Unknown keys are kept in Node.extra, bounded in depth and size.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from datetime import UTC, date, datetime, time
from enum import StrEnum
from typing import Any

from memory.domain.enums import EDGE_ALIASES, EdgeType, NodeType, Tier
from memory.domain.node import PROVENANCE_KEYS, RESERVED_KEYS, Connection, Node, Provenance, as_utc

PARSE_DEFAULT_STABILITY = 1.0
SPACE_PLACEHOLDERS = frozenset({"", "null", "none"})
MAX_EXTRA_DEPTH = 32
MAX_EXTRA_VALUES = 10_000


class InvalidField(Exception):
    """A field-level problem; markdown.parse turns it into MalformedNodeFile with the file's path and the key's line.

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


def node_from(data: dict[Any, Any], content: str) -> Node:
    """The node a parsed front matter and its body make; raises InvalidField naming the key at fault."""
    bad_keys = [k for k in data if not isinstance(k, str)]
    if bad_keys:
        raise InvalidField(f"front-matter keys must be strings, got {_kind(bad_keys[0])}")
    created = _datetime(data, "created")
    if created is None:
        raise InvalidField("missing 'created'")
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
            raise InvalidField(
                f"unknown keys nest deeper than {MAX_EXTRA_DEPTH} or hold more than {MAX_EXTRA_VALUES} values",
            )
        if isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, (list, set)):
            stack.extend((v, depth + 1) for v in value)


def _node_id(value: Any) -> str:
    if value is None:
        raise InvalidField("missing 'id'")
    if not isinstance(value, str):
        raise InvalidField(f"'id' must be a UUID string, got {_kind(value)}", "id")
    try:
        return str(uuid.UUID(value))
    except ValueError:
        raise InvalidField("'id' is not a UUID", "id") from None


def _enum(kind: type[StrEnum], data: Mapping[str, Any], key: str, default: Any) -> Any:
    value = data.get(key)
    if value is None:
        if default is None:
            raise InvalidField(f"missing '{key}'", key)
        return default
    if isinstance(value, str) and value in kind.__members__.values():
        return kind(value)
    allowed = ", ".join(m.value for m in kind)
    raise InvalidField(f"unknown {key} (expected one of: {allowed})", key)


def _scalar_text(value: Any, key: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise InvalidField(f"'{key}' must be a string, got {_kind(value)}", key)


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
        raise InvalidField(f"'{key}' must be true or false, got {_kind(value)}", key)
    return value


def _tags(value: Any) -> tuple[str, ...]:
    return _strings(value, "tags")


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list):
        raise InvalidField(f"'{key}' must be a list, got {_kind(value)}", key)
    return tuple(_scalar_text(item, key) for item in value)


def _connections(value: Any) -> tuple[Connection, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidField("'connections' must be a list", "connections")
    conns = []
    for item in value:
        if not isinstance(item, dict):
            raise InvalidField(f"each connection must be a mapping, got {_kind(item)}", "connections")
        target = item.get("target")
        if not isinstance(target, str) or not target:
            raise InvalidField("a connection without a target", "connections")
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
        raise InvalidField(f"'{key}' must be a number, got {_kind(value)}", key)
    try:
        number = float(value)
    except OverflowError:
        raise InvalidField(f"'{key}' is out of range", key) from None
    if not math.isfinite(number):
        raise InvalidField(f"'{key}' must be finite", key)
    if unit and not 0.0 <= number <= 1.0:
        raise InvalidField(f"'{key}' must be between 0 and 1", key)
    return number


def _stability(data: Mapping[str, Any]) -> float:
    value = _number(data, "stability", PARSE_DEFAULT_STABILITY)
    if value <= 0:
        raise InvalidField("'stability' must be positive", "stability")
    return value


def _count(data: Mapping[str, Any], key: str) -> int:
    value = data.get(key)
    if value is None:
        return 0
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidField(f"'{key}' must be a whole number >= 0", key)
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
    raise InvalidField(f"'{key}' is not an ISO-8601 datetime (got {_kind(value)})", key)
