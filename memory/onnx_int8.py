"""A second, optional change to the default model's ONNX graph: its weight MatMuls run on the int8 weights.

The int8 MiniLM stores each weight matrix as int8 values `<w>_q` (K x N) and one float32 scale per output column
`<w>_scale` (1 x N), dequantised in the graph (`Cast` to float32, `Mul` by the scale) before a float `MatMul`.
onnxruntime folds the dequantisation at load, so every MatMul runs in float32. This rewrite replaces each such
`MatMul(A, <w>)` by onnxruntime's com.microsoft `DynamicQuantizeMatMul(A, <w>_q, <w>_scale)`: A is quantised per
call (uint8, one scale and zero point per tensor), multiplied by the int8 weights in integers and scaled back to
float32 by the two scales. The vectors move a little (A's rounding); docs/benchmarks.md, "An int8 forward pass,
session 16" measures how far and what it costs and saves.

The protobuf is read and written with memory.onnx_graph's helpers (the `onnx` package is not a dependency).
"""

from __future__ import annotations

from collections import Counter

from memory.onnx_graph import (
    _FLOAT, _GRAPH_INITIALIZER, _GRAPH_NODE, _GRAPH_OUTPUT, _GRAPH_VALUE_INFO, _MODEL_GRAPH, _NODE_INPUT,
    _NODE_NAME, _NODE_OUTPUT, _TENSOR_DIMS, _TENSOR_NAME, _VALUE_INFO_NAME, _encode_varint, _fields,
    _initializer_shapes, _int_attributes, _length_delimited, _node, _strings,
)

MICROSOFT = "com.microsoft"
_MODEL_OPSET_IMPORT = 8
_OPSET_DOMAIN, _OPSET_VERSION = 1, 2
_NODE_DOMAIN = 7
_NODE_OP_TYPE = 4
_OP = "DynamicQuantizeMatMul"
_TENSOR_DATA_TYPE, _INT8 = 2, 3  # onnx TensorProto.data_type, TensorProto.INT8


def int8_matmuls(model: bytes) -> bytes | None:
    """Return the model with every weight MatMul of the dequantise pattern as a DynamicQuantizeMatMul on the int8
    weights, or None when the graph holds no such MatMul or is not a protobuf this reads.

    The pattern, per weight `w`: an INT8 initializer `w_q` of shape (K, N), `Cast(w_q) -> w_f` to FLOAT,
    `Mul(w_f, w_scale) -> w` with `w_scale` an initializer of shape (1, N) used nowhere else, `w_f` used only by
    that Mul, `w` used only as the second input of MatMuls and not an output of the model. Anything else is kept as
    it is (the word and position tables, read through Gather, among them).
    """
    try:
        fields = list(_fields(model))
        graphs = [value for number, wire, value, _ in fields if number == _MODEL_GRAPH and wire == 2]
        if len(graphs) != 1:
            return None
        graph = _rewrite_graph(graphs[0])
    except (ValueError, IndexError, UnicodeDecodeError):
        return None
    if graph is None:
        return None
    out = [_length_delimited(_MODEL_GRAPH, graph) if number == _MODEL_GRAPH else raw for number, _, _, raw in fields]
    domains = [_strings(value, _OPSET_DOMAIN)[:1] for number, wire, value, _ in fields
               if number == _MODEL_OPSET_IMPORT and wire == 2]
    if [MICROSOFT] not in domains:
        out.append(_length_delimited(_MODEL_OPSET_IMPORT, _length_delimited(_OPSET_DOMAIN, MICROSOFT.encode())
                                     + _encode_varint(_OPSET_VERSION << 3) + _encode_varint(1)))
    return b"".join(out)


def _rewrite_graph(graph: bytes) -> bytes | None:
    shapes = _initializer_shapes(graph)
    int8 = {name for number, wire, value, _ in _fields(graph) if number == _GRAPH_INITIALIZER and wire == 2
            if [v for n, w, v, _ in _fields(value) if n == _TENSOR_DATA_TYPE and w == 0] == [_INT8]
            for name in _strings(value, _TENSOR_NAME)}
    nodes = [(value, *_node(value)) for number, wire, value, _ in _fields(graph) if number == _GRAPH_NODE
             and wire == 2]
    uses = Counter(name for _, _, inputs, _ in nodes for name in inputs)
    outputs = {name for number, wire, value, _ in _fields(graph) if number == _GRAPH_OUTPUT and wire == 2
               for name in _strings(value, _VALUE_INFO_NAME)}
    casts = {outs[0]: ins[0] for value, op, ins, outs in nodes
             if op == "Cast" and len(ins) == 1 and len(outs) == 1 and _int_attributes(value) == {"to": _FLOAT}}
    matmul_uses = Counter(ins[1] for _, op, ins, _ in nodes if op == "MatMul" and len(ins) == 2)
    weights: dict[str, tuple[str, str, str]] = {}  # w -> (w_q, w_f, w_scale)
    for value, op, ins, outs in nodes:
        if op != "Mul" or len(ins) != 2 or len(outs) != 1 or _int_attributes(value):
            continue
        (as_float, scale), (weight,) = ins, outs
        quantised = casts.get(as_float)
        q_shape, s_shape = shapes.get(quantised or ""), shapes.get(scale)
        if (quantised not in int8 or q_shape is None or len(q_shape) != 2 or s_shape != [1, q_shape[1]]
                or uses[as_float] != 1 or uses[scale] != 1 or uses[quantised] != 1
                or matmul_uses[weight] == 0 or matmul_uses[weight] != uses[weight]
                or {as_float, weight} & outputs):
            continue
        weights[weight] = (quantised, as_float, scale)
    if not weights:
        return None
    dropped = {f for _, f, _ in weights.values()} | set(weights)
    scales = {s for _, _, s in weights.values()}
    out: list[bytes] = []
    for number, wire, value, raw in _fields(graph):
        if number == _GRAPH_NODE and wire == 2:
            op, ins, outs = _node(value)
            if (op == "Cast" and outs and outs[0] in dropped) or (op == "Mul" and outs and outs[0] in weights):
                continue
            if op == "MatMul" and len(ins) == 2 and ins[1] in weights:
                quantised, _, scale = weights[ins[1]]
                names = _strings(value, _NODE_NAME)
                node = b"".join([*(_length_delimited(_NODE_INPUT, i.encode()) for i in (ins[0], quantised, scale)),
                                 _length_delimited(_NODE_OUTPUT, outs[0].encode()),
                                 _length_delimited(_NODE_NAME, (names[0] if names else outs[0] + "_int8").encode()),
                                 _length_delimited(_NODE_OP_TYPE, _OP.encode()),
                                 _length_delimited(_NODE_DOMAIN, MICROSOFT.encode())])
                out.append(_length_delimited(_GRAPH_NODE, node))
                continue
        elif number == _GRAPH_INITIALIZER and wire == 2 and _strings(value, _TENSOR_NAME)[:1] and \
                _strings(value, _TENSOR_NAME)[0] in scales:
            columns = shapes[_strings(value, _TENSOR_NAME)[0]][1]  # (1, N) -> (N,): one scale per column
            tensor = b"".join(r for n, _, _, r in _fields(value) if n != _TENSOR_DIMS)
            out.append(_length_delimited(_GRAPH_INITIALIZER, _encode_varint(_TENSOR_DIMS << 3) +
                                         _encode_varint(columns) + tensor))
            continue
        elif number == _GRAPH_VALUE_INFO and wire == 2 and _strings(value, _VALUE_INFO_NAME)[:1] and \
                _strings(value, _VALUE_INFO_NAME)[0] in dropped:
            continue
        out.append(raw)
    return b"".join(out)
