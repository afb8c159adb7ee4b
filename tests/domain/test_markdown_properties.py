"""Properties of the markdown format: lossless round trip for any valid node; parse only ever fails cleanly."""

from __future__ import annotations

from datetime import UTC

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.domain.enums import EdgeType, NodeType, Tier
from memory.domain.front_matter import SPACE_PLACEHOLDERS
from memory.domain.markdown import parse, render
from memory.domain.node import RESERVED_KEYS, Connection, Node
from memory.errors import MalformedNodeFile

PROPERTY = settings(max_examples=300, database=None, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Any str that can be written as UTF-8 (hypothesis text() never makes lone surrogates), '\r' and '---' included.
texts = st.text()
instants = st.datetimes(timezones=st.just(UTC))
unit = st.floats(min_value=0.0, max_value=1.0)
json_scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | texts
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)

connections = st.builds(
    Connection,
    target=st.uuids().map(str) | st.text(min_size=1),
    edge=st.sampled_from(EdgeType),
    weight=unit,
    reason=st.none() | texts,
)

nodes = st.builds(
    Node,
    id=st.uuids().map(str),
    type=st.sampled_from(NodeType),
    tier=st.sampled_from(Tier),
    content=texts,
    created=instants,
    updated=instants,
    last_accessed=instants,
    title=st.none() | texts,
    space=st.none() | texts.filter(lambda s: s.strip().lower() not in SPACE_PLACEHOLDERS),
    space_locked=st.booleans(),
    tags=st.lists(texts, max_size=5).map(tuple),
    source=texts,
    connections=st.lists(connections, max_size=4).map(tuple),
    confidence=unit,
    importance=unit,
    access_count=st.integers(min_value=0),
    last_review=st.none() | instants,
    valid_until=st.none() | instants,
    stability=st.floats(min_value=0.0, exclude_min=True, allow_infinity=False),
    deleted_at=st.none() | instants,
    extra=st.dictionaries(texts.filter(lambda k: k not in RESERVED_KEYS), json_values, max_size=4),
)


@PROPERTY
@given(nodes)
def test_parse_render_round_trip(node):
    assert parse(render(node)) == node


@PROPERTY
@given(nodes)
def test_render_is_a_fixed_point(node):
    text = render(node)
    assert render(parse(text)) == text


@PROPERTY
@given(texts)
def test_parse_of_arbitrary_text_fails_cleanly(text):
    try:
        parse(text)
    except MalformedNodeFile:
        pass


@PROPERTY
@given(st.text(alphabet="-:\n {}[]'\"#&*!|>%@`abc01.\r\t"))
def test_parse_of_yaml_like_text_fails_cleanly(body):
    try:
        parse("---\n" + body)
    except MalformedNodeFile:
        pass


front_matter_values = json_values | instants | st.dates() | st.sampled_from(list(NodeType) + list(Tier) + list(EdgeType))


@PROPERTY
@given(
    st.dictionaries(st.sampled_from(sorted(RESERVED_KEYS)) | texts, front_matter_values.map(
        lambda v: v.value if isinstance(v, (NodeType, Tier, EdgeType)) else v), max_size=12),
    texts,
)
def test_parse_of_arbitrary_front_matter_fails_cleanly(data, body):
    text = "---\n" + yaml.safe_dump(data, allow_unicode=True) + "---\n\n" + body + "\n"
    try:
        node = parse(text)
    except MalformedNodeFile:
        return
    assert parse(render(node)) == node


@PROPERTY
@given(nodes, st.data())
def test_parse_of_a_corrupted_file_fails_cleanly(node, data):
    text = render(node)
    start = data.draw(st.integers(min_value=0, max_value=len(text)))
    end = data.draw(st.integers(min_value=start, max_value=min(len(text), start + 20)))
    try:
        parse(text[:start] + data.draw(texts) + text[end:])
    except MalformedNodeFile:
        pass
