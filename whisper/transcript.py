"""Agent transcript parser (reference §8.1): JSONL bytes from a byte offset to user and assistant turns. Pure.

Claude Code: entries of `type` user/assistant with `message.content` (a string or blocks). User text comes from a
string or `text` blocks; a user entry of only `tool_result` blocks, a meta entry, or a machine-generated prompt is
skipped. Assistant text comes from `text` blocks only (tool_use and thinking are skipped). Codex `response_item`
messages and plain `{"role", "content"}` lines are read too. Only complete lines are consumed: `end_offset` stops
after the last newline, so a line being written is read next time.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from whisper.text import synthetic_match

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # what json.loads makes of an escape like \ud83d alone

CLAUDE_CODE = "claude_code"
CODEX = "codex"
AGENT_JSONL = "agent_jsonl"
_CODEX_SKIP = ("<environment_context>", "<user_instructions>", "# agents.md instructions")


@dataclass(frozen=True, slots=True)
class Turn:
    role: str  # user | assistant
    text: str


@dataclass(frozen=True, slots=True)
class TranscriptResult:
    session_id: str | None
    source: str
    turns: tuple[Turn, ...]
    end_offset: int
    total_chars: int
    bad_lines: int

    @property
    def user_turn_count(self) -> int:
        return sum(1 for t in self.turns if t.role == "user")

    @property
    def conversation(self) -> str:
        return "\n\n".join(f"{t.role.title()}: {t.text}" for t in self.turns)


def _block_texts(content, kinds: tuple[str, ...]) -> list[str] | None:
    """Texts of the blocks of the given kinds; None when the content is only tool results."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    texts, tool_only = [], bool(content)
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") != "tool_result":
            tool_only = False
        if block.get("type") in kinds and isinstance(block.get("text"), str):
            texts.append(block["text"])
    return None if tool_only else texts


def _claude_turn(entry: dict) -> Turn | None:
    role = entry.get("type")
    message = entry.get("message") or {}
    if entry.get("isMeta") or not isinstance(message, dict):
        return None
    texts = _block_texts(message.get("content"), ("text",))
    if not texts:
        return None
    text = "\n".join(t for t in texts if t.strip()).strip()
    if not text or (role == "user" and synthetic_match(text)):
        return None
    return Turn(role=role, text=text)


def _codex_turn(entry: dict) -> Turn | None:
    payload = entry.get("payload") or {}
    role = payload.get("role")
    if payload.get("type") != "message" or role not in ("user", "assistant"):
        return None
    texts = _block_texts(payload.get("content"), ("input_text", "output_text", "text")) or []
    text = "\n".join(texts).strip()
    if not text or text.lower().startswith(_CODEX_SKIP):
        return None
    return Turn(role=role, text=text)


def _plain_turn(entry: dict) -> Turn | None:
    role, content = entry.get("role"), entry.get("content")
    if role not in ("user", "assistant"):
        return None
    texts = _block_texts(content, ("text",)) or []
    text = "\n".join(texts).strip()
    return Turn(role=role, text=text) if text else None


def parse_transcript(data: bytes, *, start_offset: int = 0, session_id: str | None = None) -> TranscriptResult:
    """Turns found in the complete lines of `data` (which begins at byte `start_offset` of the file)."""
    last_newline = data.rfind(b"\n")
    complete = data[: last_newline + 1] if last_newline >= 0 else b""
    turns: list[Turn] = []
    source, bad = AGENT_JSONL, 0
    for raw in complete.splitlines():
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, UnicodeDecodeError):
            bad += 1
            continue
        if not isinstance(entry, dict):
            bad += 1
            continue
        if entry.get("type") in ("user", "assistant") and "message" in entry:
            source = CLAUDE_CODE
            session_id = session_id or entry.get("sessionId")
            turn = _claude_turn(entry)
        elif entry.get("type") == "response_item":
            source = CODEX
            turn = _codex_turn(entry)
        else:
            turn = _plain_turn(entry)
        if turn is not None and "\x00" in turn.text:  # pasted binary output: no memory or event may hold a NUL
            text = turn.text.replace("\x00", "").strip()
            turn = Turn(role=turn.role, text=text) if text else None
        if turn is not None and _LONE_SURROGATE.search(turn.text):  # an emoji cut in half: not UTF-8, never stored
            turn = Turn(role=turn.role, text=_LONE_SURROGATE.sub("\ufffd", turn.text))
        if turn is not None:
            turns.append(turn)
    return TranscriptResult(session_id=session_id, source=source, turns=tuple(turns),
                            end_offset=start_offset + len(complete), total_chars=sum(len(t.text) for t in turns),
                            bad_lines=bad)
