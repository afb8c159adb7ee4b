"""Whisper latency: p50/p95 of warm whisper_respond calls at 1k, 10k and 100k memories, and hook start-up.

    python -m bench.whisper_latency [--sizes 1000,10000,100000] [--rounds 3] [--write-docs]

The store is the labelled scenario memories (written through the real services) plus the recall benchmark's
synthetic memories (bench.recall.synthetic.generate) written straight into the index: NodeRow rows through the ORM
(FTS5 fills itself through its triggers) and topic-clustered stand-in vectors through memory.search.vectors.upsert.
The filler has no markdown files; that does not matter for reading. Every call goes through the whole pipeline
(MiniLM query embedding, hybrid recall, ledger writes).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench._common import write_block
from bench.whisper_quality import load_scenarios, seed, setup_django

HOOK = Path(__file__).resolve().parent.parent / "whisper" / "hook.py"
MANAGE = Path(__file__).resolve().parent.parent / "manage.py"
SECTION = "### Whisper latency"


def add_filler(nodes, *, start: int) -> None:
    """Append synthetic memories as index rows (FTS fills itself through its triggers) with their stand-in vectors."""
    from django.db import transaction

    from bench.recall.synthetic import TopicEmbedder
    from memory.models import NodeRow
    from memory.search import vectors

    stand_in = TopicEmbedder()
    for offset in range(0, len(nodes), 2000):
        chunk = nodes[offset:offset + 2000]
        rows = [NodeRow(
            uid=n.id, short_id=n.id[:8], type=str(n.type), tier=str(n.tier), space=n.space, title=n.title or "",
            content=n.content, tags_text=" ".join(n.tags), source="bench:filler", created=n.created,
            updated=n.updated, last_accessed=n.last_accessed, valid_until=n.valid_until,
            file_path=f"filler/{start + offset + i}.md", file_hash="x", embed_hash="x",
        ) for i, n in enumerate(chunk)]
        with transaction.atomic():
            NodeRow.objects.bulk_create(rows, batch_size=500)
            ids = dict(NodeRow.objects.filter(uid__in=[r.uid for r in rows]).values_list("uid", "id"))
            vecs = stand_in.embed_documents([f"{r.title} {r.content}" for r in rows])
            vectors.upsert((ids[r.uid], v, r.type, r.tier, r.space) for r, v in zip(rows, vecs))


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def measure(prompts: list[dict], rounds: int) -> tuple[list[float], list[float], dict[str, float], dict[str, int]]:
    """Warm whisper calls: per-call wall ms, per-call CPU ms (all threads), mean wall ms per stage, decisions."""
    import whisper.pipeline as pipeline
    from whisper.services import whisper_respond

    stage_ms: dict[str, float] = defaultdict(float)

    def timed(stage):
        def run(r, conf, deps):
            t = time.perf_counter()
            try:
                return stage(r, conf, deps)
            finally:
                stage_ms[stage.__name__] += (time.perf_counter() - t) * 1000
        run.__name__ = stage.__name__
        return run

    original = pipeline.run_stages.__defaults__
    pipeline.run_stages.__defaults__ = (tuple(timed(s) for s in pipeline.STAGES),)
    try:
        for p in prompts[:10]:
            whisper_respond(prompt=p["prompt"], space=p.get("space"))
        stage_ms.clear()
        times, cpu, decisions = [], [], defaultdict(int)
        for _ in range(rounds):
            for p in prompts:
                t, c = time.perf_counter(), time.process_time()
                result = whisper_respond(prompt=p["prompt"], space=p.get("space"))
                times.append((time.perf_counter() - t) * 1000)
                cpu.append((time.process_time() - c) * 1000)
                decisions[result.decision.split(":")[0]] += 1
    finally:
        pipeline.run_stages.__defaults__ = original
    return times, cpu, {k: v / len(times) for k, v in stage_ms.items()}, dict(decisions)


def recall_alone(prompts: list[dict]) -> list[float]:
    """CPU ms of memory.search.recall by itself (its own query embedding included) for the same prompts."""
    from memory import runtime
    from memory.domain.search import SearchQuery
    from memory.search import recall

    embedder, cpu = runtime.embedder(), []
    for p in prompts:
        query = SearchQuery(query=p["prompt"], limit=6, tiers=["core", "working"], default_space=p.get("space"),
                            min_score=0.0, activation=False)
        c = time.process_time()
        recall(query=query, embedder=embedder)
        cpu.append((time.process_time() - c) * 1000)
    return cpu


def hook_startup(runs: int = 10) -> dict[str, float]:
    """Median wall time of the hook client on an empty prompt (no request), run as a script and via manage.py."""
    out = {}
    for label, cmd in (("hook script (python whisper/hook.py inject)", [sys.executable, str(HOOK), "inject"]),
                       ("management command (manage.py whisper inject)", [sys.executable, str(MANAGE), "whisper",
                                                                          "inject"])):
        samples = []
        for _ in range(runs if "script" in label else max(3, runs // 3)):
            t = time.perf_counter()
            subprocess.run(cmd, input='{"prompt": ""}', capture_output=True, text=True, check=True)
            samples.append((time.perf_counter() - t) * 1000)
        out[label] = statistics.median(samples)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-latency-") as tmp:
        setup_django(Path(tmp))
        from bench.recall.synthetic import generate
        from memory import runtime

        memories, prompts = load_scenarios()
        seed(memories, now=datetime.now(UTC))
        prompts = [p for p in prompts if p["prompt"].strip()]
        embedder = runtime.embedder()
        t = time.perf_counter()
        for p in prompts:
            embedder.embed_query(p["prompt"])
        embed_ms = (time.perf_counter() - t) * 1000 / len(prompts)
        rows, base = [], len(memories) + 1  # + the self node
        have = base
        filler = generate(max(sizes) - base)
        for size in sizes:
            add_filler(filler[have - base:size - base], start=have)
            have = size
            load_before = os.getloadavg()[0]
            times, cpu, stages, decisions = measure(prompts, args.rounds)
            alone = recall_alone(prompts)
            top = ", ".join(f"{k} {v:.1f}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1])[:3])
            rows.append(f"| {size:,} | {len(times)} | {percentile(times, 0.5):.1f} | {percentile(times, 0.95):.1f} | "
                        f"{percentile(cpu, 0.5):.1f} / {percentile(cpu, 0.95):.1f} | "
                        f"{percentile(alone, 0.5):.1f} / {percentile(alone, 0.95):.1f} | {load_before:.1f} | {top} |")
            print(rows[-1], decisions, flush=True)
        startup = hook_startup()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = (
        f"{SECTION}\n\n"
        "`python -m bench.whisper_latency --write-docs`: warm `whisper_respond` calls in process (the whole pipeline:\n"
        "MiniLM query embedding, hybrid recall, ledger writes), every non-empty scenario prompt "
        f"× {args.rounds} rounds.\n"
        "Stores: the scenario memories plus the recall benchmark's synthetic memories (template sentences,\n"
        "topic-clustered stand-in vectors) written straight into the index.\n"
        f"Machine: {os.cpu_count()} CPUs, shared with other jobs (load average per size in the table, {load:.1f} at\n"
        f"the end); the query embedding alone averaged {embed_ms:.1f} ms per prompt. CPU ms counts every thread of\n"
        "the process, so it is not inflated by waiting for a busy CPU. \"recall alone\" is the CPU time of\n"
        "`memory.search.recall` by itself (its own query embedding included) on the same prompts: most of a\n"
        "whisper is the query embedding and recall.\n\n"
        "| memories | calls | p50 ms | p95 ms | CPU ms p50 / p95 | recall alone, CPU ms p50 / p95 | load "
        "| slowest stages (mean wall ms) |\n|---|---|---|---|---|---|---|---|\n"
        + "\n".join(rows) + "\n\nHook client start-up (median wall time, empty prompt, no request):\n\n"
        + "\n".join(f"- {label}: {ms:.0f} ms" for label, ms in startup.items()) + "\n"
    )
    print(text)
    if args.write_docs:
        write_block("whisper_latency", text.removeprefix(SECTION + "\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
