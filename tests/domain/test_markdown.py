"""Markdown node files: golden files, parse defaults, malformed input."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.markdown import format_timestamp, parse, render
from memory.domain.node import Connection
from memory.errors import MalformedNodeFile
from tests.domain.test_node import T0, make_node

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
GOLDEN_FILES = sorted(GOLDEN.glob("*.md"))
NODE_ID = "3f2a9c1e-7b4d-4e8a-9c2f-1a2b3c4d5e6f"


def front(*lines: str, body: str = "Body.") -> str:
    return "---\n" + "".join(f"{line}\n" for line in lines) + "---\n\n" + body + "\n"


MINIMAL = (f"id: {NODE_ID}", "type: fact", "created: '2026-07-01T10:00:00Z'")


# ---------------------------------------------------------------------------
# Golden files
# ---------------------------------------------------------------------------

def test_there_are_golden_files():
    assert len(GOLDEN_FILES) >= 4


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden_file_renders_back_byte_for_byte(path):
    data = path.read_bytes()
    assert render(parse(data.decode("utf-8"), source=str(path))).encode("utf-8") == data


def test_original_example_parses_to_expected_node():
    node = parse((GOLDEN / "original_ormah_example.md").read_text(encoding="utf-8"))
    assert node == make_node(
        type=NodeType.DECISION, content="SQLite is the derived index; markdown is canonical.",
        created=datetime(2026, 7, 1, 10, 0, 0, 123456, tzinfo=UTC),
        updated=datetime(2026, 7, 1, 10, 0, 0, 123456, tzinfo=UTC),
        last_accessed=datetime(2026, 7, 1, 10, 0, 0, 123456, tzinfo=UTC),
        title="Chose SQLite over Postgres for local-first index", space="ormah", tags=("sqlite", "storage"),
        source="agent:claude-code", stability=5.814,
        connections=(Connection("a1b2c3d4-0000-4000-8000-000000000001", EdgeType.RELATED_TO, 0.72),),
    )


def test_connection_reasons_survive():
    node = parse((GOLDEN / "connections_with_reasons.md").read_text(encoding="utf-8"))
    assert [c.reason for c in node.connections] == [
        "about_self", "Newer decision says Postgres: the team needs row-level locks", None,
    ]


def test_unknown_keys_go_to_extra():
    node = parse((GOLDEN / "unknown_keys.md").read_text(encoding="utf-8"))
    assert sorted(node.extra) == ["archived_at", "merge_history", "plugin", "superseded_by"]
    assert node.extra["plugin"]["nested"] == {"deeper": {"deepest": 42}}


def test_body_dashes_stay_in_content():
    node = parse((GOLDEN / "unicode_body.md").read_text(encoding="utf-8"))
    assert node.content.splitlines()[2] == "---"
    assert node.content.endswith("Ende.")


def test_body_is_verbatim():
    node = parse((GOLDEN / "verbatim_body.md").read_text(encoding="utf-8"))
    assert node.content == "\n    indented code after a blank line\n\ntrailing spaces   \n"


# ---------------------------------------------------------------------------
# Render
# ---------------------------------------------------------------------------

def test_render_minimal_node():
    assert render(make_node(stability=1.0)) == (
        "---\n"
        "access_count: 0\n"
        "confidence: 1.0\n"
        "created: '2026-07-01T10:00:00.000000Z'\n"
        f"id: {NODE_ID}\n"
        "importance: 0.5\n"
        "last_accessed: '2026-07-01T10:00:00.000000Z'\n"
        "source: agent:unknown\n"
        "stability: 1.0\n"
        "tier: working\n"
        "type: fact\n"
        "updated: '2026-07-01T10:00:00.000000Z'\n"
        "---\n"
        "\n"
        "Lives in Dublin.\n"
    )


def test_render_writes_space_locked_only_when_true():
    assert "space_locked" not in render(make_node(space_locked=False))
    assert "space_locked: true\n" in render(make_node(space_locked=True))


def test_render_does_not_wrap_long_lines():
    title = " ".join(["word"] * 100)
    assert f"title: {title}\n" in render(make_node(title=title))


def test_render_multiline_title_on_one_line():
    assert 'title: "a\\n---\\nb"\n' in render(make_node(title="a\n---\nb"))


def test_format_timestamp():
    assert format_timestamp(datetime(5, 1, 2, 3, 4, 5, tzinfo=UTC)) == "0005-01-02T03:04:05.000000Z"


# ---------------------------------------------------------------------------
# Parse defaults
# ---------------------------------------------------------------------------

def test_parse_defaults():
    node = parse(front(*MINIMAL))
    assert node == make_node(content="Body.", stability=1.0)


def test_updated_defaults_to_created_and_last_accessed_to_updated():
    node = parse(front(*MINIMAL[:2], "created: '2026-07-01T10:00:00Z'"))
    assert (node.updated, node.last_accessed) == (T0, T0)


def test_last_accessed_defaults_to_updated():
    node = parse(front(*MINIMAL, "updated: '2026-07-02T10:00:00Z'"))
    assert node.last_accessed == datetime(2026, 7, 2, 10, 0, tzinfo=UTC)


def test_naive_timestamp_is_utc():
    assert parse(front(*MINIMAL[:2], "created: '2026-07-01T10:00:00'")).created == T0


def test_unquoted_yaml_timestamp_is_accepted():
    assert parse(front(*MINIMAL[:2], "created: 2026-07-01 12:00:00+02:00")).created == T0


def test_date_only_is_midnight_utc():
    assert parse(front(*MINIMAL[:2], "created: 2026-07-01")).created == datetime(2026, 7, 1, tzinfo=UTC)


@pytest.mark.parametrize("value", ["null", "'null'", "None", "''", "'   '", "none"])
def test_space_placeholders_become_none(value):
    assert parse(front(*MINIMAL, f"space: {value}")).space is None


def test_connection_defaults():
    node = parse(front(*MINIMAL, "connections:", "- target: a1b2c3d4-0000-4000-8000-000000000001"))
    assert node.connections == (Connection("a1b2c3d4-0000-4000-8000-000000000001", EdgeType.RELATED_TO, 0.5),)


def test_integer_numbers_are_accepted():
    node = parse(front(*MINIMAL, "confidence: 1", "stability: 7"))
    assert (node.confidence, node.stability) == (1.0, 7.0)


def test_crlf_file_is_accepted():
    text = front(*MINIMAL, "tier: core").replace("\n", "\r\n")
    node = parse(text)
    assert (node.tier, node.content) == (Tier.CORE, "Body.")


def test_byte_order_mark_is_ignored():
    assert parse("\ufeff" + front(*MINIMAL)).id == NODE_ID


def test_uppercase_id_is_normalised():
    assert parse(front(f"id: {NODE_ID.upper()}", *MINIMAL[1:])).id == NODE_ID


def test_file_ending_at_closing_delimiter_has_empty_content():
    assert parse("---\n" + "\n".join(MINIMAL) + "\n---").content == ""


# ---------------------------------------------------------------------------
# Malformed files
# ---------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "reason"), [
    ("Just text.\n", "no front matter"),
    ("---\nid: x\n", "front matter is not closed"),
    ("---\n[a, b\n---\n", "invalid YAML"),
    ("---\n- a\n- b\n---\n", "front matter is not a mapping"),
    ("---\n---\n\nBody\n", "front matter is not a mapping"),
    (front("type: fact", "created: '2026-07-01T10:00:00Z'"), "missing 'id'"),
    (front("id: not-a-uuid", *MINIMAL[1:]), "'id' is not a UUID (line 2)"),
    (front("id: 42", *MINIMAL[1:]), "'id' must be a UUID string, got a number"),
    (front(*MINIMAL[:2]), "missing 'created'"),
    (front(MINIMAL[0], MINIMAL[2]), "missing 'type'"),
    (front(MINIMAL[0], "type: thought", MINIMAL[2]), "unknown type (expected one of"),
    (front(*MINIMAL, "tier: gold"), "unknown tier (expected one of"),
    (front(*MINIMAL, "connections:", "- target: x", "  edge: likes"), "unknown edge (expected one of"),
    (front(*MINIMAL, "connections:", "- edge: supports"), "a connection without a target"),
    (front(*MINIMAL, "confidence: high"), "'confidence' must be a number, got a string (line 5)"),
    (front(*MINIMAL, "confidence: 1.5"), "'confidence' must be between 0 and 1"),
    (front(*MINIMAL, "importance: .nan"), "'importance' must be finite"),
    (front(*MINIMAL, "stability: 0"), "'stability' must be positive"),
    (front(*MINIMAL, "access_count: -1"), "'access_count' must be a whole number >= 0"),
    (front(*MINIMAL, "access_count: true"), "'access_count' must be a whole number >= 0"),
    (front(*MINIMAL, "updated: yesterday"), "'updated' is not an ISO-8601 datetime (got a string)"),
    (front(*MINIMAL, "valid_until: 2026-02-30"), "invalid YAML"),
    (front(*MINIMAL, "space_locked: maybe"), "'space_locked' must be true or false, got a string"),
    (front(*MINIMAL, "tags: {a: 1}"), "'tags' must be a list"),
    (front(*MINIMAL, "title: [a]"), "'title' must be a string, got a list"),
    (front(*MINIMAL, "1: one"), "front-matter keys must be strings, got a number"),
    (front(*MINIMAL, "x: " + "[" * 40 + "]" * 40), "unknown keys nest deeper than 32"),
    (front(*MINIMAL, "x: &a [*a]"), "unknown keys nest deeper than 32"),
    (front(*MINIMAL, "a: &a [x, x, x, x, x, x, x, x, x, x]", "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
           "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]", "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]"),
     "unknown keys nest deeper than 32 or hold more than 10000 values"),
])
def test_malformed_file_reason(text, reason):
    with pytest.raises(MalformedNodeFile) as info:
        parse(text, source="nodes/bad.md")
    assert info.value.reason.startswith(reason)


@pytest.mark.parametrize("text", [
    "---\npassword: hunter2\n  bad: [indent\n---\n\nBody\n",
    front(*MINIMAL, "confidence: hunter2"),
    front("id: hunter2", *MINIMAL[1:]),
    front(*MINIMAL, "tier: hunter2"),
    front(*MINIMAL, "updated: hunter2"),
    front(*MINIMAL, "connections:", "- edge: hunter2"),
])
def test_malformed_reason_never_quotes_the_file(text):
    with pytest.raises(MalformedNodeFile) as info:
        parse(text, source="nodes/bad.md")
    assert "hunter2" not in info.value.reason


def test_a_yaml_error_gives_its_line_in_the_file():
    with pytest.raises(MalformedNodeFile) as info:
        parse("---\nid: x\ntitle: [unclosed\n---\n\nBody\n", source="nodes/bad.md")
    assert info.value.reason.startswith("invalid YAML: ") and info.value.reason.endswith("(line 4)")


def test_nested_unknown_keys_within_limits_are_kept():
    node = parse(front(*MINIMAL, "x: " + "[" * 31 + "]" * 31))
    assert "x" in node.extra


def test_malformed_file_carries_path_and_code():
    with pytest.raises(MalformedNodeFile) as info:
        parse("nothing", source="nodes/bad.md")
    assert (info.value.path, info.value.code, str(info.value)) == (
        "nodes/bad.md", "malformed_file", "nodes/bad.md: no front matter",
    )
