"""Whisper latency: p50/p95 of warm whisper_respond calls at 1k, 10k and 100k memories, and hook start-up.

    python -m bench.whisper_latency [--sizes 1000,10000,100000] [--rounds 3] [--write-docs]

The store is the labelled scenario memories (written through the real services) plus synthetic filler rows
written straight into the index: NodeRow rows through the ORM (FTS5 fills itself through its triggers) and random
unit vectors through memory.search.vectors.upsert. The filler has no markdown files; that does not matter for
reading. Every call goes through the whole pipeline (MiniLM query embedding, hybrid recall, ledger writes).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench.whisper_quality import load_scenarios, seed, setup_django, write_section

HOOK = Path(__file__).resolve().parent.parent / "whisper" / "hook.py"
MANAGE = Path(__file__).resolve().parent.parent / "manage.py"
SECTION = "### Whisper latency"
WORDS = ("deploy cache index sqlite vector token server port queue worker invoice payment stripe webhook retry "
         "backup schema migration release branch review test fixture parser budget gate session buffer ledger "
         "docker laptop editor python golang meeting planning vacation coffee chess garden sensor firmware "
         "thesis chapter draft latency throughput shard replica lock timeout").split()
TYPES = ("fact", "decision", "preference", "event", "procedure", "observation")


def add_filler(count: int, *, start: int, rng: random.Random, dim: int) -> None:
    """Append `count` synthetic memories (rows, FTS through triggers, random unit vectors)."""
    import numpy as np
    from django.db import transaction

    from memory.models import NodeRow
    from memory.search import vectors

    now = datetime.now(UTC)
    for offset in range(0, count, 2000):
        rows = []
        for i in range(start + offset, start + min(count, offset + 2000)):
            uid = str(uuid.UUID(int=rng.getrandbits(128)))
            words = rng.sample(WORDS, 12)
            created = now - timedelta(days=rng.uniform(0, 400))
            rows.append(NodeRow(
                uid=uid, short_id=uid[:8], type=rng.choice(TYPES), tier=rng.choice(("working", "working", "core")),
                space=rng.choice((None, "ormah", "shopfront", "garden", "thesis")), title=" ".join(words[:4]),
                content=" ".join(words), source="bench:filler", created=created, updated=created,
                last_accessed=created, file_path=f"filler/{i}.md", file_hash="x", embed_hash="x",
            ))
        with transaction.atomic():
            NodeRow.objects.bulk_create(rows, batch_size=500)
            ids = dict(NodeRow.objects.filter(uid__in=[r.uid for r in rows]).values_list("uid", "id"))
            vecs = np.asarray([rng.gauss(0, 1) for _ in range(len(rows) * dim)], dtype=np.float32).reshape(-1, dim)
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
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
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="ormah-whisper-latency-") as tmp:
        setup_django(Path(tmp))
        from memory import runtime

        memories, prompts = load_scenarios()
        seed(memories, now=datetime.now(UTC))
        prompts = [p for p in prompts if p["prompt"].strip()]
        embedder = runtime.embedder()
        t = time.perf_counter()
        for p in prompts:
            embedder.embed_query(p["prompt"])
        embed_ms = (time.perf_counter() - t) * 1000 / len(prompts)
        rows, have = [], len(memories) + 1
        for size in sizes:
            add_filler(size - have, start=have, rng=rng, dim=embedder.dim)
            have = size
            load_before = os.getloadavg()[0]
            times, cpu, stages, decisions = measure(prompts, args.rounds)
            top = ", ".join(f"{k} {v:.1f}" for k, v in sorted(stages.items(), key=lambda kv: -kv[1])[:3])
            rows.append(f"| {size:,} | {len(times)} | {percentile(times, 0.5):.1f} | {percentile(times, 0.95):.1f} | "
                        f"{percentile(cpu, 0.5):.1f} / {percentile(cpu, 0.95):.1f} | {load_before:.1f} | {top} |")
            print(rows[-1], decisions, flush=True)
        startup = hook_startup()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    text = (
        f"{SECTION}\n\n"
        "`python -m bench.whisper_latency --write-docs`: warm `whisper_respond` calls in process (the whole pipeline:\n"
        "MiniLM query embedding, hybrid recall, ledger writes), every non-empty scenario prompt "
        f"× {args.rounds} rounds.\n"
        "Stores: the scenario memories plus synthetic filler rows and random unit vectors written straight into\n"
        f"the index. Machine: {os.cpu_count()} CPUs, shared with other jobs (load average per size in the table,\n"
        f"{load:.1f} at the end); the query embedding alone averaged {embed_ms:.1f} ms per prompt. CPU ms counts\n"
        "every thread of the process, so it is not inflated by waiting for a busy CPU.\n\n"
        "| memories | calls | p50 ms | p95 ms | CPU ms p50 / p95 | load | slowest stages (mean wall ms) |\n"
        "|---|---|---|---|---|---|---|\n"
        + "\n".join(rows) + "\n\nHook client start-up (median wall time, empty prompt, no request):\n\n"
        + "\n".join(f"- {label}: {ms:.0f} ms" for label, ms in startup.items()) + "\n"
    )
    print(text)
    if args.write_docs:
        write_section(text, marker=SECTION)
    return 0


if __name__ == "__main__":
    sys.exit(main())
