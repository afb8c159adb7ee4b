"""Whisper latency before and after a change, measured in the same run: p50/p95 wall and CPU per call.

    python -m bench.whisper_ab --baseline <git rev> [--rounds 2] [--split test] [--write-docs]

Exports the baseline revision's tree with `git archive` into a temporary folder, then alternates child processes
(baseline, current, baseline, current, ...) so both see the same machine load. Each child loads the three labelled
stores (bench/datasets/) into a fresh home with the document-vector cache, warms up, and times whisper_respond
over the split's prompts (each in its own session, no history). The child is this file run by path with
PYTHONPATH set to the tree under test, so it measures that tree's code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "### Whisper latency before and after"


def child(split: str, out: Path) -> None:
    """Seed the stores into a fresh home and time every prompt of the split (runs in the tree under test)."""
    os.environ.setdefault("ORMAH_EMBEDDER", "bench.datasets.embed_cache.CachedEmbedder")
    from bench.whisper_quality import setup_django

    with tempfile.TemporaryDirectory(prefix="ormah-whisper-ab-") as tmp:
        setup_django(Path(tmp))
        from bench.datasets.loader import load_whisper, merged_memories
        from bench.recall.harness import Dataset, seed
        from whisper.services import whisper_respond

        scenarios = load_whisper()
        memories, edges = merged_memories(scenarios.stores)
        seed(Dataset(now=scenarios.now, self_name="Noor Haddad", memories=memories, edges=edges, queries=()),
             auto_link=False)
        prompts = scenarios.prompts_in(split)
        for p in prompts[:10]:
            whisper_respond(prompt=p["prompt"], space=p.get("space"), now=scenarios.now, session_id="warm")
        wall, cpu = [], []
        for i, p in enumerate(prompts):
            t, c = time.perf_counter(), time.process_time()
            whisper_respond(prompt=p["prompt"], space=p.get("space"), now=scenarios.now, session_id=f"ab-{i}")
            wall.append((time.perf_counter() - t) * 1000)
            cpu.append((time.process_time() - c) * 1000)
    out.write_text(json.dumps({"wall": wall, "cpu": cpu}))


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def export(rev: str, dest: Path) -> str:
    """Extract `rev`'s tree into dest; returns its short commit id."""
    sha = subprocess.run(["git", "rev-parse", "--short", rev], cwd=ROOT, check=True, capture_output=True,
                         text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", "--format=tar", sha], cwd=ROOT, check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return sha


def run_child(tree: Path, split: str, out: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", "--split", split, "--out", str(out)],
                   cwd=tree, env=env, check=True)
    return json.loads(out.read_text())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="main", help="git revision to compare against")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--split", default="test")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args(argv)
    if args.child:
        child(args.split, args.out)
        return 0
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout)
    samples: dict[str, dict[str, list[float]]] = {"before": {"wall": [], "cpu": []}, "after": {"wall": [], "cpu": []}}
    load = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="ormah-ab-tree-") as tmp:
        base_tree = Path(tmp) / "base"
        base_tree.mkdir()
        base = export(args.baseline, base_tree)
        for r in range(args.rounds):
            for label, tree in (("before", base_tree), ("after", ROOT)):
                got = run_child(tree, args.split, Path(tmp) / f"{label}-{r}.json")
                samples[label]["wall"] += got["wall"]
                samples[label]["cpu"] += got["cpu"]
                print(f"round {r + 1} {label}: p95 wall {pct(got['wall'], 0.95):.0f} ms", file=sys.stderr)
    rows = {k: {"p50": pct(v["wall"], 0.5), "p95": pct(v["wall"], 0.95), "cpu50": pct(v["cpu"], 0.5),
                "cpu95": pct(v["cpu"], 0.95), "cpu_mean": statistics.fmean(v["cpu"]), "n": len(v["wall"])}
            for k, v in samples.items()}
    after_label = f"{head}{' + uncommitted changes' if dirty else ''}"
    text = (f"{SECTION}\n\n`python -m bench.whisper_ab --baseline {args.baseline} --rounds {args.rounds} "
            f"--split {args.split}`: before = {base}, after = {after_label}, children alternated in one run; "
            f"load average at start {load[0]:.2f} / {load[1]:.2f} (2 cores, shared).\n\n"
            "| code | calls | wall p50 | wall p95 | CPU p50 | CPU p95 | CPU mean |\n|---|---|---|---|---|---|---|\n"
            + "".join(f"| {k} | {r['n']} | {r['p50']:.0f} ms | {r['p95']:.0f} ms | {r['cpu50']:.0f} ms "
                      f"| {r['cpu95']:.0f} ms | {r['cpu_mean']:.0f} ms |\n" for k, r in rows.items())
            + f"\nRatio after/before: wall p95 {rows['after']['p95'] / rows['before']['p95']:.2f}, "
              f"CPU p95 {rows['after']['cpu95'] / rows['before']['cpu95']:.2f}.\n")
    print(text)
    if args.write_docs:
        from bench._common import write_block

        write_block("whisper_ab", text.removeprefix(SECTION + "\n"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
