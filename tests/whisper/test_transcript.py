"""The transcript parser: Claude Code, Codex and plain JSONL, byte offsets and partial lines."""

from __future__ import annotations

import json

from whisper.transcript import Turn, parse_transcript


def line(obj) -> bytes:
    return (json.dumps(obj) + "\n").encode()


USER = {"type": "user", "sessionId": "abc",
        "message": {"role": "user", "content": "remember that we deploy on fridays"}}
USER_BLOCKS = {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "and use uv"}]}}
TOOL_RESULT = {"type": "user", "message": {"role": "user", "content": [
    {"type": "tool_result", "tool_use_id": "t1", "content": "file contents"}]}}
META = {"type": "user", "isMeta": True, "message": {"role": "user", "content": "<local-command-caveat>"}}
COMMAND = {"type": "user", "message": {"role": "user", "content": "<command-name>/clear</command-name>"}}
ASSISTANT = {"type": "assistant", "message": {"role": "assistant", "content": [
    {"type": "thinking", "thinking": "hmm"}, {"type": "text", "text": "Noted."},
    {"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]}}
SUMMARY = {"type": "summary", "summary": "Deploy talk", "leafUuid": "x"}


def test_claude_code_turns_skip_tool_results_meta_commands_and_non_text_blocks():
    data = b"".join(line(e) for e in (SUMMARY, USER, ASSISTANT, TOOL_RESULT, META, COMMAND, USER_BLOCKS))
    result = parse_transcript(data)
    assert result.turns == (
        Turn("user", "remember that we deploy on fridays"), Turn("assistant", "Noted."), Turn("user", "and use uv"),
    )
    assert (result.source, result.session_id, result.user_turn_count, result.end_offset) == (
        "claude_code", "abc", 2, len(data))
    assert result.conversation == "User: remember that we deploy on fridays\n\nAssistant: Noted.\n\nUser: and use uv"


def test_a_partial_last_line_is_left_for_next_time():
    whole = line(USER)
    partial = json.dumps(USER_BLOCKS).encode()[:20]
    result = parse_transcript(whole + partial, start_offset=100)
    assert (len(result.turns), result.end_offset) == (1, 100 + len(whole))


def test_bad_lines_are_counted_and_skipped():
    result = parse_transcript(b"not json\n[1, 2]\n" + line(USER))
    assert (result.bad_lines, len(result.turns)) == (2, 1)


def test_codex_messages_skip_environment_context():
    env = {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "<environment_context>cwd=/x</environment_context>"}]}}
    ask = {"type": "response_item", "payload": {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "I prefer tabs"}]}}
    answer = {"type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "ok"}]}}
    result = parse_transcript(line(env) + line(ask) + line(answer))
    assert (result.source, result.turns) == ("codex", (Turn("user", "I prefer tabs"), Turn("assistant", "ok")))


def test_plain_role_content_lines():
    result = parse_transcript(line({"role": "user", "content": "hi there"}))
    assert (result.source, result.turns) == ("agent_jsonl", (Turn("user", "hi there"),))


def test_empty_input():
    result = parse_transcript(b"", start_offset=42)
    assert (result.turns, result.end_offset) == ((), 42)
