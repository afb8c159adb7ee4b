"""One change to the default model's ONNX graph: its word-embedding table stays int8 in memory.

The int8 MiniLM stores each weight as int8 values and a float32 scale, dequantised in the graph (`Cast` to float32,
then `Mul` by the scale). onnxruntime's constant folding runs those nodes once at load and keeps float32 results,
so the 30,522 x 384 word table costs 45 MiB instead of 11 MiB in every process that loads the model. That table is only read through `Gather` (a few
hundred rows per batch), so the rewritten graph gathers the int8 rows and their scales first and dequantises just
those: the same float operations on the same values, so the same vectors bit for bit, and the folding has nothing
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
_GRAPH_NODE, _GRAPH_VALUE_INFO = 1, 13
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_VALUE_INFO_NAME = 1


def gather_word_rows_first(model: bytes, table: str = WORD_TABLE) -> bytes | None:
    """Return the model with `table` dequantised after its `Gather` instead of before, or None when the graph
    does not hold exactly the pattern expected (Cast of `<table>.weight_q`, Mul by `<table>.weight_scale`, one
    Gather of the product)."""
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
    expected = {("Cast", (quantised,), (as_float,)): "cast", ("Mul", (as_float, scale), (dequantised,)): "mul"}
    seen: dict[str, int] = {}
    out: list[bytes] = []
    for number, wire, value, raw in _fields(graph):
        if number == _GRAPH_NODE and wire == 2:
            op, inputs, outputs = _node(value)
            role = expected.get((op, inputs, outputs))
            if role is None and op == "Gather" and len(inputs) == 2 and inputs[0] == dequantised:
                role = "gather"
                ids, rows = inputs[1], outputs[0]
                out += [_length_delimited(_GRAPH_NODE, node) for node in (
                    _node_bytes("Gather", [quantised, ids], [f"{table}.rows_q"], f"{table}.gather_rows_q"),
                    _node_bytes("Cast", [f"{table}.rows_q"], [f"{table}.rows_f"], f"{table}.cast_rows",
                                attributes=[_int_attribute("to", _FLOAT)]),
                    _node_bytes("Gather", [scale, ids], [f"{table}.rows_scale"], f"{table}.gather_rows_scale"),
                    _node_bytes("Mul", [f"{table}.rows_f", f"{table}.rows_scale"], [rows], f"{table}.scale_rows"),
                )]
            elif role is None and any(name in (as_float, dequantised) for name in inputs):
                return None  # another consumer of the float32 table: it must stay
            if role is not None:
                seen[role] = seen.get(role, 0) + 1
                continue
        elif number == _GRAPH_VALUE_INFO and wire == 2 and _strings(value, _VALUE_INFO_NAME)[:1] in (
                [as_float], [dequantised]):
            continue  # the shapes of the two float32 tables, which no longer exist
        out.append(raw)
    if seen != {"cast": 1, "mul": 1, "gather": 1}:
        return None
    return b"".join(out)


# -- protobuf wire format ---------------------------------------------------------------------------------------

def _varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
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
        elif wire == 1:
            value, at = message[at:at + 8], at + 8
        elif wire == 5:
            value, at = message[at:at + 4], at + 4
        elif wire == 2:
            size, at = _varint(message, at)
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
