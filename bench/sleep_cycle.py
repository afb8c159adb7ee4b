"""Sleep-cycle benchmark: run-all (every maintenance job, seed 001's order) on a generated store, no LLM.

    python -m bench.sleep_cycle [--sizes 1000,10000] [--write]

Each size runs in its own child process with a fresh temporary ORMAH_HOME (file database, `migrate`), the real
offline embedder and the real services. The store is the bench corpus (bench/_common.py, seed 1) written as
markdown files and indexed by one sync (vectors come from the bench-local cache shared with bench/spine.py);
`last_accessed` is spread over the last 10 days, so decay has real work (R < 0.3 after about 7 days).

Three cycles are timed, all with `sleep_cycle_run` and a fixed clock: cold (every node new to every job), warm
(straight after, nothing changed: the watermarks make it cheap) and incremental (after 100 new memories written
through `node_create`). During the cold cycle an agent in another process (as a web worker is) edits one memory of
its own every AGENT_EVERY_S through `node_update`, and each write's wall time is set beside the job that was
running (issue 13 item 7: an agent's write should never wait for a job). `--write` replaces its marked block in the "Sleep cycle"
section of docs/benchmarks.md.

`--jobs` runs instead each job once, alone and cold, in cycle order on a fresh store (no agent, no warm cycle),
and reports each job's CPU time (`time.process_time`) and wall time with the load average, plus short hashes of
the node rows, edges and proposals after it (the same hashes before and after a change = the same decisions);
`--profile-dir` also writes a cProfile file per job.
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from bench._common import REPO, Memory, corpus, machine, rss_mb, write_block
from bench.spine import DEFAULT_CACHE_DIR, cache_save, cache_seed, django_home, model_warm

NOW = datetime(2026, 5, 20, 12, 0, tzinfo=UTC)
NEW_MEMORIES = 100
AGENT_EVERY_S = 0.5


def _node(m: Memory, rng: random.Random):
    from memory.domain.node import Connection, Node

    accessed = NOW - timedelta(days=rng.uniform(0.0, 10.0))
    created = min(m.created, accessed)
    return Node(
        id=m.id, type=m.type, tier="working", content=m.content, title=m.title, created=created, updated=created,
        last_accessed=accessed, space=m.space, tags=m.tags, source="bench:sleep_cycle",
        connections=tuple(Connection(target=t, edge="related_to", weight=0.7, reason="bench") for t in m.connections),
    )


def _cycle() -> dict:
    from maintenance.runner import sleep_cycle_run

    start = time.perf_counter()
    outcomes = sleep_cycle_run(trigger="bench", now=NOW)
    total = time.perf_counter() - start
    return {"total_s": total, "jobs": [o.as_dict() | {"started_at": o.started_at.timestamp(),
                                                      "finished_at": o.finished_at.timestamp()} for o in outcomes]}


def agent(home: Path, node_id: str, stop: Path, out: Path) -> None:
    """Edit one memory every AGENT_EVERY_S until `stop` exists; write [(wall start, seconds)] to `out`."""
    django_home(home)
    from memory import runtime
    from memory.domain.requests import NodePatch
    from memory.services import node_update

    runtime.embedder().embed_documents(["warm up"])
    out.with_suffix(".ready").touch()
    writes, i = [], 0
    while not stop.exists():
        i += 1
        start, t0 = time.time(), time.perf_counter()
        node_update(ref=node_id, patch=NodePatch(content=f"Agent scratch note, edit {i}: what the session learned"))
        writes.append((start, time.perf_counter() - t0))
        time.sleep(AGENT_EVERY_S)
    out.write_text(json.dumps(writes))


def _with_agent(home: Path, node_id: str) -> tuple[dict, list]:
    """The cold cycle with the agent of `agent` writing beside it."""
    stop, out = home / "agent.stop", home / "agent.json"
    proc = subprocess.Popen([sys.executable, "-m", "bench.sleep_cycle", "--agent", node_id, "--home", str(home),
                             "--out", str(out)], cwd=REPO, env=dict(os.environ))
    deadline = time.monotonic() + 300
    while not out.with_suffix(".ready").exists():
        assert proc.poll() is None and time.monotonic() < deadline, "the agent process did not start"
        time.sleep(0.2)
    try:
        cycle = _cycle()
    finally:
        stop.touch()
        proc.wait(timeout=120)
    return cycle, json.loads(out.read_text())


def agent_waits(cycle: dict, writes: list) -> dict[str, dict]:
    """Per job: the agent's writes that started while it ran, their median and longest wall time."""
    out = {}
    for job in cycle["jobs"]:
        took = sorted(s for start, s in writes if job["started_at"] <= start < job["finished_at"])
        if took:
            out[job["job"]] = {"n": len(took), "median_s": took[len(took) // 2], "max_s": took[-1]}
    return out


def store_build(home: Path, size: int, cache_dir: Path) -> tuple[dict, list]:
    """The bench store in a fresh home: files (plain writes, a setup), cached vectors, one sync; (facts, memories)."""
    result: dict = {"size": size, "env": django_home(home)}
    os.environ.setdefault("ORMAH_LLM_PROVIDER", "none")
    from memory import index, runtime
    from memory.domain.markdown import render
    from memory.domain.slug import node_filename
    from memory.models import EdgeRow

    store, emb = runtime.store(), runtime.embedder()
    rng = random.Random(3)
    memories = corpus(size, seed=1)
    nodes = [_node(m, rng) for m in memories]
    start = time.perf_counter()
    store.nodes_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    for node in nodes:  # fresh ids: straight to the standard name
        (store.nodes_dir / node_filename(node)).write_bytes(render(node).encode("utf-8"))
    result["write_files_s"] = time.perf_counter() - start
    result["cache_seeded"] = cache_seed(cache_dir, nodes, emb.model_id)
    result["model_load_s"] = model_warm(emb)
    start = time.perf_counter()
    report = index.sync(store, embedder=emb)
    result["setup_sync_s"] = time.perf_counter() - start
    assert report.indexed == size and not report.malformed, report.as_dict()
    cache_save(cache_dir, nodes, emb.model_id)
    result["edges_before"] = EdgeRow.objects.count()
    return result, memories


def child(home: Path, size: int, cache_dir: Path) -> dict:
    result, memories = store_build(home, size, cache_dir)
    from memory.domain.requests import NodeCreate, NodePatch
    from memory.models import EdgeRow, NodeRow
    from memory.services import node_create, node_update

    mine = node_create(request=NodeCreate(content="Agent scratch note", source="bench:agent"), now=NOW,
                       auto_link=False).node.id
    idle = []
    for _ in range(5):  # the same write with no job running: the floor
        t0 = time.perf_counter()
        node_update(ref=mine, patch=NodePatch(content=f"Agent scratch note, idle edit {len(idle)}"))
        idle.append(time.perf_counter() - t0)
    result["agent_idle_s"] = sorted(idle)[len(idle) // 2]

    result["cold"], writes = _with_agent(home, mine)
    result["agent"] = agent_waits(result["cold"], writes)
    result["warm"] = _cycle()
    fresh = corpus(NEW_MEMORIES, seed=4, exclude={f"{m.title or ''} {m.content}" for m in memories}, connect=False)
    for m in fresh:
        node_create(request=NodeCreate(content=m.content, title=m.title, type=m.type, space=m.space,
                                       source="bench:sleep_cycle"), now=NOW)
    result["incremental"] = _cycle()
    result["nodes_after"] = NodeRow.objects.count()
    result["tiers_after"] = _tiers()
    result["edges_after"] = EdgeRow.objects.count()
    result["rss_end"] = rss_mb()
    result["db_mb"] = os.path.getsize(result["env"]["db"]) / 1024 / 1024
    return result


def fingerprint() -> dict[str, str]:
    """Short hashes of what the jobs decide: node rows (tier, space, importance), edges, proposals, merges."""
    from maintenance.models import ProposalRow
    from memory.models import EdgeRow, NodeRow

    parts = {
        "nodes": NodeRow.objects.order_by("uid").values_list("uid", "type", "tier", "space", "importance", "title",
                                                               "content", "tags_text"),
        "edges": EdgeRow.objects.order_by("source__uid", "target__uid", "edge_type").values_list(
            "source__uid", "target__uid", "edge_type", "weight", "reason"),
        "proposals": ProposalRow.objects.order_by("key", "status", "created_at").values_list(
            "kind", "key", "status", "score", "priority", "action", "reason", "payload", "basis", "group_key"),
    }
    return {name: hashlib.sha256(json.dumps(list(rows), default=str).encode()).hexdigest()[:12]
            for name, rows in parts.items()}


def child_jobs(home: Path, size: int, cache_dir: Path, profile_dir: Path | None) -> dict:
    """Each job of the cycle alone, in cycle order, cold: CPU and wall time, outcome, and what it decided."""
    result, _ = store_build(home, size, cache_dir)
    from maintenance.registry import jobs
    from maintenance.runner import job_execute

    result["load_before"] = os.getloadavg()
    result["jobs"] = []
    for spec in jobs():
        profile = cProfile.Profile(time.process_time) if profile_dir else None  # CPU, not wall
        cpu, wall = time.process_time(), time.perf_counter()
        if profile:
            profile.enable()
        outcome = job_execute(spec.name, trigger="bench", now=NOW)
        if profile:
            profile.disable()
            profile.dump_stats(profile_dir / f"{size}-{spec.name}.pstats")
        result["jobs"].append({"job": spec.name, "cpu_s": time.process_time() - cpu,
                               "wall_s": time.perf_counter() - wall, "status": outcome.status,
                               "counts": outcome.counts, "after": fingerprint()})
    result["load_after"] = os.getloadavg()
    return result


def jobs_markdown(results: list[dict]) -> str:
    lines = []
    for r in results:
        load = f"load {r['load_before'][0]:.1f} -> {r['load_after'][0]:.1f}"
        lines += ["", f"{r['size']:,} nodes ({load}):", "", "| job | CPU s | wall s | status | counts | after |",
                  "|---|---:|---:|---|---|---|"]
        for j in r["jobs"]:
            after = " ".join(f"{k[0]}:{v}" for k, v in j["after"].items())
            lines.append(f"| {j['job']} | {j['cpu_s']:.2f} | {j['wall_s']:.2f} | {j['status']} | {_counts(j)} | "
                         f"{after} |")
    return "\n".join(lines)


def _tiers() -> dict:
    from django.db.models import Count

    from memory.models import NodeRow

    return dict(NodeRow.objects.values_list("tier").annotate(n=Count("id")).order_by())


# ---------------------------------------------------------------------------
# Parent side
# ---------------------------------------------------------------------------

def _run_child(size: int, temp_root: Path, cache_dir: Path, time_limit: float, extra: list[str] = ()) -> dict:
    home = Path(tempfile.mkdtemp(prefix="ormah-bench-", dir=temp_root))
    out = home.parent / (home.name + ".json")
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}
    env.update(DJANGO_SETTINGS_MODULE="ormah_site.settings", ORMAH_LLM_PROVIDER="none", ORMAH_LOG_LEVEL="WARNING",
               ORMAH_MAINTENANCE_JOB_TIME_LIMIT_SECONDS=str(time_limit))
    cmd = [sys.executable, "-m", "bench.sleep_cycle", "--child", "--size", str(size), "--home", str(home),
           "--out", str(out), "--cache-dir", str(cache_dir), *extra]
    try:
        subprocess.run(cmd, cwd=REPO, env=env, check=True)
        return json.loads(out.read_text())
    finally:
        out.unlink(missing_ok=True)
        shutil.rmtree(home, ignore_errors=True)


def _counts(job: dict) -> str:
    return ", ".join(f"{k} {v:,}" for k, v in sorted(job["counts"].items()) if v) or "-"


def report_markdown(results: list[dict], facts: dict, command: str) -> str:
    lines = [
        f"Measured {facts['date']} with `{command}` (bench/sleep_cycle.py): `sleep_cycle_run` (the same call as "
        "`POST /api/admin/tasks/run-all`), no LLM, fixed clock, each size in a fresh process and ORMAH_HOME.",
        "",
        f"- Machine: {facts['cpus']} CPUs ({facts['cpu']}), {facts['ram']} RAM, {facts['os']}; Python "
        f"{facts['python']}; temp folder on {facts['temp_fs']}",
        "- Store: the bench corpus (seed 1), 30% with 1-2 connections, `last_accessed` spread over the last 10 days; "
        f"incremental = after {NEW_MEMORIES} new memories through `node_create`. Per-job time bound "
        f"{facts['time_limit']} s (`ORMAH_MAINTENANCE_JOB_TIME_LIMIT_SECONDS`; the default 60 s spreads a cold "
        "backlog over several cycles, each job stopping as `partial`).",
        "",
        "| nodes | cold cycle s | warm cycle s | incremental cycle s | peak RSS MiB | DB MiB |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        lines.append(f"| {r['size']:,} | {r['cold']['total_s']:.1f} | {r['warm']['total_s']:.2f} | "
                     f"{r['incremental']['total_s']:.1f} | {r['rss_end']['peak']:.0f} | {r['db_mb']:.1f} |")
    for r in results:
        lines += ["", f"#### {r['size']:,} nodes, per job (seconds; status; what it did)", "",
                  "| job | cold | warm | incremental | cold counts |", "|---|---:|---:|---:|---|"]
        for cold, warm, inc in zip(r["cold"]["jobs"], r["warm"]["jobs"], r["incremental"]["jobs"]):
            lines.append(f"| {cold['job']} | {cold['seconds']:.2f} ({cold['status']}) | {warm['seconds']:.2f} | "
                         f"{inc['seconds']:.2f} | {_counts(cold)} |")
        if r.get("agent"):
            lines += ["", f"An agent's write beside the cold cycle (another process, `node_update` every "
                      f"{AGENT_EVERY_S} s; the same write with no job running: {r['agent_idle_s']:.3f} s):", "",
                      "| job running | agent writes | median s | longest s |", "|---|---:|---:|---:|"]
            for job, w in r["agent"].items():
                lines.append(f"| {job} | {w['n']} | {w['median_s']:.3f} | {w['max_s']:.3f} |")
        lines += ["", f"Edges {r['edges_before']:,} -> {r['edges_after']:,}; tiers after: "
                  + ", ".join(f"{k} {v:,}" for k, v in sorted(r["tiers_after"].items()))
                  + f". Setup (not timed above): files {r['write_files_s']:.1f} s, sync {r['setup_sync_s']:.1f} s."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--write", action="store_true", help="replace its marked block in docs/benchmarks.md")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    parser.add_argument("--time-limit", type=float, default=3600.0,
                        help="per-job time bound in seconds (the product default is 60; large = one cycle does it all)")
    parser.add_argument("--jobs", action="store_true",
                        help="each job alone, cold, in cycle order: CPU time per job (no agent, no warm cycle)")
    parser.add_argument("--profile-dir", type=Path, help="with --jobs: write a cProfile .pstats file per job here")
    parser.add_argument("--json-out", type=Path, help="with --jobs: also write the raw results here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--agent", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.agent:
        agent(args.home, args.agent, args.out.with_suffix(".stop"), args.out)
        return
    if args.child:
        result = child_jobs(args.home, args.size, args.cache_dir, args.profile_dir) if args.jobs else \
            child(args.home, args.size, args.cache_dir)
        args.out.write_text(json.dumps(result, default=str))
        return
    temp_root = Path(tempfile.gettempdir())
    if args.jobs:
        extra = ["--jobs"] + (["--profile-dir", str(args.profile_dir.resolve())] if args.profile_dir else [])
        if args.profile_dir:
            args.profile_dir.mkdir(parents=True, exist_ok=True)
        results = [_run_child(int(s), temp_root, args.cache_dir, args.time_limit, extra) for s in args.sizes.split(",")]
        if args.json_out:
            args.json_out.write_text(json.dumps(results, default=str, indent=1))
        print(jobs_markdown(results))
        return
    results = [_run_child(int(s), temp_root, args.cache_dir, args.time_limit) for s in args.sizes.split(",")]
    facts = machine(temp_root) | {"date": datetime.now(UTC).strftime("%Y-%m-%d")}
    command = "python -m bench.sleep_cycle " + " ".join(sys.argv[1:])
    text = report_markdown(results, facts | {"time_limit": f"{args.time_limit:g}"}, command.strip())
    print(text)
    if args.write:
        write_block("sleep_cycle", text)


if __name__ == "__main__":
    main()
