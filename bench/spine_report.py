"""The report of bench/spine.py: its results (one dict per child scenario) as the "Memory spine" markdown section.

Also what `python -m bench.spine --from-json` renders from an earlier run's raw results.
"""

from __future__ import annotations

import os
from importlib import metadata

import numpy as np

from bench._common import percentile

REMEMBER_P50_TARGET_MS = 30.0
REBUILD_TARGET_NODES_S = 2000.0


def _fmt(value: float, digits: int = 1) -> str:
    return f"{value:,.{digits}f}"


def _load(r: dict) -> str:
    return f"{r['load_start']:.1f} / {r['load_end']:.1f}"


def _mark(ok: bool) -> str:
    return "met" if ok else "**missed**"


def report_markdown(results: list[dict], facts: dict, command: str) -> str:
    """The "Memory spine" section: the setup, then a table per scenario and the resident memory of each child."""
    env = next((r["env"] for r in results), {})
    versions = ", ".join(f"{p} {metadata.version(p)}" for p in ("Django", "fastembed", "onnxruntime", "sqlite-vec"))
    lines = [
        f"Measured {facts['date']} with `{command}` (bench/spine.py); every scenario in a fresh process and a fresh "
        "temporary ORMAH_HOME with a file database.",
        "",
        f"- Machine: {facts['cpus']} CPUs ({facts['cpu']}), {facts['ram']} RAM, {facts['os']}; "
        f"temp folder on {facts['temp_fs']}",
        f"- Python {facts['python']}, SQLite {env.get('sqlite', '?')} ({env.get('sqlite_driver', '?')} driver), "
        f"sqlite-vec {env.get('sqlite_vec', '?')}; {versions}",
        "- Embedder: ormah/all-MiniLM-L6-v2-int8 (offline, 384 dims), onnxruntime threads = "
        f"{os.environ.get('ORMAH_EMBEDDING_THREADS') or 'default'}",
        "- Corpus: generated memory-like texts (bench/_common.py, seed 1, 16 templates, 10 node types, 30% with "
        "1-2 connections, 70% in one of 8 spaces)",
        "",
    ]
    remember = [r for r in results if r["scenario"] == "remember"]
    if remember:
        lines += [
            f"### remember (`node_create`, real embedder, auto-link on), {remember[0]['calls']} calls",
            "",
            f"| existing nodes | p50 ms | p95 ms | mean ms | max ms | target p50 <= {REMEMBER_P50_TARGET_MS:.0f} ms "
            "| embed | knn | file write | index | other | CPU p50 ms | auto-links/call | load avg |",
            "|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for r in remember:
            ms, s = r["ms"], r["split_p50_ms"]
            p50 = percentile(ms, 50)
            lines.append(
                f"| {r['size']:,} | {_fmt(p50)} | {_fmt(percentile(ms, 95))} | {_fmt(float(np.mean(ms)))} "
                f"| {_fmt(max(ms))} | {_mark(p50 <= REMEMBER_P50_TARGET_MS)} | {_fmt(s['embed'])} | {_fmt(s['knn'])} "
                f"| {_fmt(s['write'])} | {_fmt(s['index'])} | {_fmt(s['other'])} | {_fmt(percentile(r['cpu_ms'], 50))} "
                f"| {r['auto_links_mean']:.2f} | {_load(r)} |"
            )
        lines += [
            "",
            "embed / knn / file write / index / other: p50 ms of each phase of one call (the embedding happens once, "
            "in auto-link; indexing then hits the embedding cache). CPU: the calling thread's CPU time (the "
            "embedder's extra onnxruntime threads not included), a check on wall times taken on a busy machine. "
            "Load avg: the 1-minute load average at the start and end of the calls. Setup per size (not timed above): "
            + "; ".join(
                f"{r['size']:,} nodes: files {_fmt(r['write_files_s'])} s, sync {_fmt(r['setup_sync_s'])} s "
                f"({r['setup_embedded']:,} embedded, {r['cache_seeded']:,} vectors from the bench cache)"
                for r in remember
            ) + ".",
            "",
        ]
    rebuild = [r for r in results if r["scenario"] == "rebuild"]
    if rebuild:
        lines += [
            "### rebuild (`memory.rebuild.rebuild`)",
            "",
            f"| nodes | cold total s | cold nodes/s | embed s | index s | before: every row rewritten (verify) s "
            f"| CPU s | unchanged full s | unchanged nodes/s | target >= {REBUILD_TARGET_NODES_S:,.0f}/s "
            "| unchanged CPU s | x floor | incremental, nothing changed, s | load avg |",
            "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
        ]
        for r in rebuild:
            cold, full = r["cold"], float(np.median(r["unchanged_s"]))
            rate = r["size"] / full
            floor = float(np.median(r.get("floor_s") or [float("nan")]))
            lines.append(
                f"| {r['size']:,} | {_fmt(cold['total_s'], 2)} | {_fmt(r['size'] / cold['total_s'], 0)} "
                f"| {_fmt(cold['embed_s'], 2)} | {_fmt(cold['index_s'], 2)} "
                f"| {_fmt(float(np.median(r.get('verify_s') or [float('nan')])), 2)} "
                f"| {_fmt(float(np.median(r.get('verify_cpu_s') or [float('nan')])), 2)} | {_fmt(full, 2)} "
                f"| {_fmt(rate, 0)} | {_mark(rate >= REBUILD_TARGET_NODES_S)} "
                f"| {_fmt(float(np.median(r['unchanged_cpu_s'])), 2)} | {_fmt(full / floor, 1)} "
                f"| {_fmt(float(np.median(r['incremental_s'])), 3)} "
                f"| {_load(r)} |"
            )
        lines += [
            "",
            "Cold: fresh DB and empty embedding cache, model already loaded; embed s is the time inside "
            "`embed_documents`, index s the rest (file reads, parsing, rows, FTS, vectors, edges). Before: "
            "`rebuild(verify=True)`, which trusts no hash and rewrites every row (what every full rebuild "
            "did before). Unchanged: `rebuild()` again, which keeps the rows whose file hash is unchanged "
            "(CPU s: process CPU time of the same runs); x floor: its wall time over reading and hashing every "
            "file once (`store.stat`). "
            "Median of "
            f"{len(rebuild[0]['unchanged_s'])} runs for unchanged and incremental. Writing the files first "
            "(rendered and named as the store does, no fsync): "
            + "; ".join(f"{r['size']:,} in {_fmt(r['write_files_s'])} s" for r in rebuild) + ".",
            "",
        ]
    lines += [
        "### resident memory (VmRSS, MiB)",
        "",
        "| scenario | nodes | after setup | model load s | after model load | after cold rebuild | end | peak |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        cold = _fmt(r["rss_cold"]["rss"], 0) if "rss_cold" in r else "-"
        lines.append(
            f"| {r['scenario']} | {r['size']:,} | {_fmt(r['rss_setup']['rss'], 0)} | {_fmt(r['model_load_s'], 2)} "
            f"| {_fmt(r['rss_model']['rss'], 0)} | {cold} | {_fmt(r['rss_end']['rss'], 0)} "
            f"| {_fmt(r['rss_end']['peak'], 0)} |"
        )
    return "\n".join(lines) + "\n"
