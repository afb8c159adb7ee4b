"""Evidence events: the append-only record of what was said and done (docs/trust.md). Pure.

One event is one JSON object on one line of `$ORMAH_HOME/evidence/YYYY-MM-DD.jsonl` (the UTC day it was
recorded). Keys are sorted and the line is compact, so an event always encodes to the same bytes. The id names the
day (`ev_20260701_<16 hex>`), so a citation says which file holds its event.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from memory.domain.node import FrozenMapping, as_utc
from memory.domain.requests import MAX_EVENT_ID_CHARS, MAX_SOURCE_CHARS
from memory.domain.scopes import GLOBAL_SCOPE, Scope

MAX_EVENT_TEXT = 64 * 1024
# The index's columns (memory.models.EvidenceRow: PostgreSQL's varchar refuses longer) and the API's limits
MAX_EVENT_SESSION_CHARS, MAX_EVENT_SCOPE_ID_CHARS = 200, 300
_EVENT_ID = re.compile(r"ev_(\d{8})_[0-9a-f]{16}")


class EvidenceKind(StrEnum):
    """What an evidence event records."""

    USER_MESSAGE = "user_message"
    ASSISTANT_MESSAGE = "assistant_message"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    FILE_EDIT = "file_edit"
    SYSTEM_EVENT = "system_event"
    EXPLICIT_MEMORY = "explicit_memory"




@dataclass(frozen=True, slots=True)
class EvidenceEvent:
    """One evidence event, exactly as its line in the day file holds it."""

    id: str
    kind: EvidenceKind
    at: datetime
    text: str = ""
    session_id: str | None = None
    scope: Scope = GLOBAL_SCOPE
    source: str = ""
    data: Mapping[str, Any] = field(default_factory=FrozenMapping, hash=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", EvidenceKind(self.kind))
        object.__setattr__(self, "at", as_utc(self.at))
        object.__setattr__(self, "data", FrozenMapping(self.data))

    @property
    def day(self) -> str:
        """The day file's stem (YYYY-MM-DD) taken from the id."""
        return day_of(self.id) or self.at.strftime("%Y-%m-%d")


def new_event_id(now: datetime) -> str:
    """A fresh event id naming the UTC day of `now`."""
    return f"ev_{as_utc(now):%Y%m%d}_{uuid.uuid4().hex[:16]}"


def day_of(event_id: str) -> str | None:
    """YYYY-MM-DD of an event id, or None when the id is not one Ormah makes."""
    match = _EVENT_ID.fullmatch(event_id)
    if match is None:
        return None
    d = match.group(1)
    return f"{d[:4]}-{d[4:6]}-{d[6:]}"


def plain_data(value: Any) -> Any:
    """An event's data as plain JSON values: every mapping (FrozenMapping too) a dict with text keys, every tuple a
    list (the day file's line and the index's data column hold it so)."""
    if isinstance(value, Mapping):
        return {str(k): plain_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain_data(v) for v in value]
    return value


def encode_event(event: EvidenceEvent) -> str:
    """The event's line (compact JSON, sorted keys, no newline inside, none at the end)."""
    data: dict[str, Any] = {"id": event.id, "kind": event.kind.value, "at": _stamp(event.at), "text": event.text,
                            "scope": {"type": event.scope.type.value, "id": event.scope.id}}
    if event.session_id is not None:
        data["session_id"] = event.session_id
    if event.source:
        data["source"] = event.source
    if event.data:
        data["data"] = plain_data(event.data)
    return json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def decode_event(line: str) -> EvidenceEvent:
    """The event a line holds; raises ValueError for anything that is not a well-formed event."""
    raw = json.loads(line)
    if not isinstance(raw, dict):
        raise ValueError("an evidence line must be a JSON object")
    if "\\u" in line:  # an escaped lone surrogate (a foreign line) is text no database driver can store
        try:
            json.dumps(raw, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("an evidence event holds a lone surrogate (an escape like \\ud800 alone)") from None
    ident, text, source = raw.get("id"), raw.get("text", ""), raw.get("source", "")
    if not isinstance(ident, str) or not ident or not isinstance(text, str) or not isinstance(source, str):
        raise ValueError("an evidence event needs a string id, text and source")
    scope = raw.get("scope") or {"type": "global", "id": "global"}
    session = raw.get("session_id")
    data = raw.get("data") or {}
    if not isinstance(scope, dict) or not isinstance(data, dict) or not (session is None or isinstance(session, str)):
        raise ValueError("scope and data must be objects, session_id a string")
    at = raw.get("at")
    if not isinstance(at, str):
        raise ValueError("an evidence event needs an ISO-8601 `at`")
    for name, value, limit in (("id", ident, MAX_EVENT_ID_CHARS), ("source", source, MAX_SOURCE_CHARS),
                               ("session_id", session or "", MAX_EVENT_SESSION_CHARS),
                               ("scope id", scope.get("id") or "", MAX_EVENT_SCOPE_ID_CHARS)):
        if isinstance(value, str) and len(value) > limit:  # a foreign or hand-edited line: skipped, the sync goes on
            raise ValueError(f"an evidence event's {name} is longer than {limit} characters")
    return EvidenceEvent(id=ident, kind=EvidenceKind(raw.get("kind")), at=datetime.fromisoformat(at), text=text,
                         session_id=session, scope=Scope(type=scope.get("type"), id=scope.get("id")),
                         source=source, data=data)


def _stamp(value: datetime) -> str:
    return as_utc(value).replace(tzinfo=None).isoformat(timespec="microseconds") + "Z"
