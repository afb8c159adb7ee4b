"""One change to the default model's ONNX graph: its word-embedding table stays int8 in memory.

The int8 MiniLM stores each weight as int8 values and a float32 scale, dequantised in the graph (`Cast` to float32,
then `Mul` by the scale). onnxruntime's constant folding runs those nodes once at load and keeps float32 results,
so the 30,522 x 384 word table costs 45 MiB instead of 11 MiB in every process that loads the model. That table is
only read through `Gather` (a few hundred rows per batch), so the rewritten graph gathers the int8 rows and their
scales first and dequantises just those: the same float operations on the same values, so the same vectors bit for bit, and the folding has nothing
left to turn into a float32 table (docs/benchmarks.md, "Serve tree RSS").

The model is a protobuf (onnx's ModelProto); the `onnx` package is not a dependency, so the few fields this needs
are read and written here. Every other byte of the file is kept as it was.
"""

from __future__ import annotations

from collections.abc import Iterator

WORD_TABLE = "inner.embeddings.word_embeddings"  # the default model's names: <table>.weight_q / .weight_scale
_FLOAT = 1  # onnx TensorProto.FLOAT
_ATTRIBUTE_INT = 2  # onnx AttributeProto.INT

# Field numbers of onnx.proto3 used here.
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_NAME, _GRAPH_INITIALIZER, _GRAPH_INPUT, _GRAPH_OUTPUT, _GRAPH_VALUE_INFO = 1, 2, 5, 11, 12, 13
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_TENSOR_DIMS, _TENSOR_NAME = 1, 8
_VALUE_INFO_NAME = 1


def gather_word_rows_first(model: bytes, table: str = WORD_TABLE) -> bytes | None:
    """Return the model with `table` dequantised after its `Gather` instead of before, or None when the graph
    does not hold exactly the pattern expected: `<table>.weight_q` (an initializer of n rows) Cast to FLOAT, that
    Mul by `<table>.weight_scale` (an initializer of shape (n, 1), one scale per row, or a single scale), one
    Gather of the product on axis 0 and no other use of the float32 tables, and none of the names this adds
    already taken."""
    try:
        fields = list(_fields(model))
    except (ValueError, IndexError):  # not a protobuf message
        return None
    graphs = [value for number, wire, value, _ in fields if number == _MODEL_GRAPH and wire == 2]
    if len(graphs) != 1:
        return None
    try:
        graph = _rewrite_graph(graphs[0], table)
    except (ValueError, IndexError, UnicodeDecodeError):
        return None
    if graph is None:
        return None
    return b"".join(_length_delimited(_MODEL_GRAPH, graph) if number == _MODEL_GRAPH else raw
                    for number, _, _, raw in fields)


def _rewrite_graph(graph: bytes, table: str) -> bytes | None:
    quantised, scale, as_float, dequantised = (f"{table}.weight_q", f"{table}.weight_scale", f"{table}.weight_f",
                                               f"{table}.weight")
    rows_q, rows_f, rows_scale = f"{table}.rows_q", f"{table}.rows_f", f"{table}.rows_scale"
    node_names = (f"{table}.gather_rows_q", f"{table}.cast_rows", f"{table}.gather_rows_scale", f"{table}.scale_rows")
    if _names(graph) & {rows_q, rows_f, rows_scale, *node_names}:
        return None  # a name this adds is already taken
    shapes = _initializer_shapes(graph)
    table_shape, scale_shape = shapes.get(quantised), shapes.get(scale)
    if table_shape is None or len(table_shape) != 2 or scale_shape is None:
        return None
    per_row = scale_shape == [table_shape[0], 1]
    if not per_row and any(dim != 1 for dim in scale_shape):  # per column, or any other shape: not handled
        return None
    expected = {("Cast", (quantised,), (as_float,)): "cast", ("Mul", (as_float, scale), (dequantised,)): "mul"}
    seen: dict[str, int] = {}
    out: list[bytes] = []
    for number, wire, value, raw in _fields(graph):
        if number == _GRAPH_NODE and wire == 2:
            op, inputs, outputs = _node(value)
            attributes = _int_attributes(value)
            role = expected.get((op, inputs, outputs))
            if role == "cast" and attributes != {"to": _FLOAT}:
                return None
            if role == "mul" and attributes:
                return None
            if role is None and op == "Gather" and len(inputs) == 2 and inputs[0] == dequantised:
                if len(outputs) != 1 or attributes.get("axis", 0) != 0 or set(attributes) - {"axis"}:
                    return None
                role = "gather"
                ids, rows = inputs[1], outputs[0]
                nodes = [_node_bytes("Gather", [quantised, ids], [rows_q], node_names[0]),
                         _node_bytes("Cast", [rows_q], [rows_f], node_names[1],
                                     attributes=[_int_attribute("to", _FLOAT)])]
                if per_row:
                    nodes += [_node_bytes("Gather", [scale, ids], [rows_scale], node_names[2]),
                              _node_bytes("Mul", [rows_f, rows_scale], [rows], node_names[3])]
                else:
                    nodes.append(_node_bytes("Mul", [rows_f, scale], [rows], node_names[3]))
                out += [_length_delimited(_GRAPH_NODE, node) for node in nodes]
            elif role is None and any(name in (as_float, dequantised) for name in inputs):
                return None  # another consumer of the float32 table: it must stay
            if role is not None:
                seen[role] = seen.get(role, 0) + 1
                continue
        elif number == _GRAPH_OUTPUT and wire == 2 and _strings(value, _VALUE_INFO_NAME)[:1] in (
                [as_float], [dequantised]):
            return None  # the float32 table is an output of the model: it must stay
        elif number == _GRAPH_VALUE_INFO and wire == 2 and _strings(value, _VALUE_INFO_NAME)[:1] in (
                [as_float], [dequantised]):
            continue  # the shapes of the two float32 tables, which no longer exist
        out.append(raw)
    if seen != {"cast": 1, "mul": 1, "gather": 1}:
        return None
    return b"".join(out)


def _names(graph: bytes) -> set[str]:
    """Every name the graph uses: its nodes' inputs, outputs and names, initializers, inputs, outputs and shapes."""
    names: set[str] = set()
    for number, wire, value, _ in _fields(graph):
        if wire != 2:
            continue
        if number == _GRAPH_NODE:
            names.update(_strings(value, _NODE_INPUT), _strings(value, _NODE_OUTPUT), _strings(value, _NODE_NAME))
        elif number == _GRAPH_INITIALIZER:
            names.update(_strings(value, _TENSOR_NAME))
        elif number in (_GRAPH_INPUT, _GRAPH_OUTPUT, _GRAPH_VALUE_INFO):
            names.update(_strings(value, _VALUE_INFO_NAME))
    return names


def _initializer_shapes(graph: bytes) -> dict[str, list[int]]:
    """The dims of each initializer (a TensorProto's repeated int64 dims, packed or not), by name."""
    shapes: dict[str, list[int]] = {}
    for number, wire, value, _ in _fields(graph):
        if number != _GRAPH_INITIALIZER or wire != 2:
            continue
        dims: list[int] = []
        for n, w, v, _ in _fields(value):
            if n == _TENSOR_DIMS and w == 0:
                dims.append(v)
            elif n == _TENSOR_DIMS and w == 2:
                at = 0
                while at < len(v):
                    dim, at = _varint(v, at)
                    dims.append(dim)
        for name in _strings(value, _TENSOR_NAME):
            shapes[name] = dims
    return shapes


def _int_attributes(node: bytes) -> dict[str, int | None]:
    """A node's attributes by name: the INT value of each int attribute, None for any other kind."""
    attributes: dict[str, int | None] = {}
    for number, wire, value, _ in _fields(node):
        if number == _NODE_ATTRIBUTE and wire == 2:
            name = _strings(value, _ATTR_NAME)
            ints = [v for n, w, v, _ in _fields(value) if n == _ATTR_I and w == 0]
            kinds = [v for n, w, v, _ in _fields(value) if n == _ATTR_TYPE and w == 0]
            attributes[name[0] if name else ""] = ints[0] if len(ints) == 1 and kinds in ([], [_ATTRIBUTE_INT]) \
                else None
    return attributes


# -- protobuf wire format ---------------------------------------------------------------------------------------

def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ValueError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, at


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _fields(message: bytes) -> Iterator[tuple[int, int, bytes | int, bytes]]:
    """(field number, wire type, value, the field's raw bytes) of each field of a message, in order."""
    at = 0
    while at < len(message):
        start = at
        key, at = _varint(message, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _varint(message, at)
        elif wire in (1, 2, 5):
            size = 8 if wire == 1 else 4 if wire == 5 else None
            if size is None:
                size, at = _varint(message, at)
            if at + size > len(message):
                raise ValueError("truncated protobuf field")
            value, at = message[at:at + size], at + size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value, message[start:at]


def _strings(message: bytes, number: int) -> list[str]:
    return [value.decode() for n, wire, value, _ in _fields(message) if n == number and wire == 2]


def _node(message: bytes) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    op = _strings(message, _NODE_OP_TYPE)
    return (op[0] if op else "", tuple(_strings(message, _NODE_INPUT)), tuple(_strings(message, _NODE_OUTPUT)))


def _length_delimited(number: int, payload: bytes) -> bytes:
    return _encode_varint(number << 3 | 2) + _encode_varint(len(payload)) + payload


def _int_attribute(name: str, value: int) -> bytes:
    return (_length_delimited(_ATTR_NAME, name.encode()) + _encode_varint(_ATTR_I << 3) + _encode_varint(value)
            + _encode_varint(_ATTR_TYPE << 3) + _encode_varint(_ATTRIBUTE_INT))


def _node_bytes(op: str, inputs: list[str], outputs: list[str], name: str, *,
                attributes: list[bytes] = ()) -> bytes:
    return b"".join([*(_length_delimited(_NODE_INPUT, i.encode()) for i in inputs),
                     *(_length_delimited(_NODE_OUTPUT, o.encode()) for o in outputs),
                     _length_delimited(_NODE_NAME, name.encode()), _length_delimited(_NODE_OP_TYPE, op.encode()),
                     *(_length_delimited(_NODE_ATTRIBUTE, a) for a in attributes)])
