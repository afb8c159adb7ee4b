"""CPU per job of the sleep cycle in the soak's conditions (issue 13 item 7).

    python -m bench.sleep_cycle_cpu [--memories 2000] [--remembers 450] [--feedback 150] [--profile-dir DIR]
                                    [--json-out FILE]

One child process, a fresh ORMAH_HOME, the real embedder and services, no LLM, a fixed clock. The store is the
soak's (bench/_common.py corpus seed 1, the first `--memories`, used within the last ten days: bench/sleep_cycle.py
`store_build`). Then three sleep cycles, each job run through `job_execute` under the maintenance lock as
`sleep_cycle_run` runs them:

- **first**: the soak's first cycle, every memory new to every job;
- **warm**: after what the soak's agents write between two cycles: `--remembers` memories remembered four at a
  time (`nodes_remember`, auto-links on, as the group commit of several agents writes them; the soak's texts) and
  `--feedback` confirmed uses (`node_confirm_use`, a +1) of memories picked at random;
- **idle**: straight after, nothing new: what a cycle costs that does not depend on what changed.

Per job: CPU seconds (`time.process_time`; the system part of it from `os.times`), wall seconds, SQL statements
(an executemany counted once), the writes among them, fsync calls from Python (memory files, their folders, the
evidence day file: a memory file write is one), status and counts, and short hashes of the node rows, edges and
proposals after it (bench/sleep_cycle.py `fingerprint`). Ids are drawn from a seeded generator, so two commits
given the same arguments write the same memories and the hashes compare what the jobs decided. `--profile-dir`
writes a cProfile (CPU clock) per cycle and job.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import timedelta
from pathlib import Path

from bench._common import REPO, corpus
from bench.sleep_cycle import NOW, fingerprint, store_build
from bench.spine import DEFAULT_CACHE_DIR

CYCLE_GAP = timedelta(seconds=90)  # between the soak's cycles: 60 s apart, or when the last one finished
GROUP = 4  # remembers per group commit
WRITES = re.compile(r"^\s*(?:\d+ times: )?(INSERT|UPDATE|DELETE|REPLACE)", re.IGNORECASE)


class Tally:
    """SQL statements and fsync calls of this process while counting."""

    def __init__(self) -> None:
        self.statements = self.writes = self.fsyncs = 0

    def sql(self, execute, sql, params, many, context):
        self.statements += 1
        self.writes += bool(WRITES.match(sql))
        return execute(sql, params, many, context)


def _seed_ids(seed: int) -> None:
    """uuid4 from a seeded generator: the same run writes the same ids on any commit (a bench, never the app)."""
    rng = random.Random(seed)
    uuid.uuid4 = lambda: uuid.UUID(int=rng.getrandbits(128), version=4)


def _count_fsyncs(tally: Tally) -> None:
    real = os.fsync

    def fsync(fd):
        tally.fsyncs += 1
        return real(fd)

    os.fsync = fsync


def cycle(name: str, now, tally: Tally, profile_dir: Path | None) -> dict:
    """Every job once in cycle order under the maintenance lock, each measured alone."""
    from django.db import connection

    from maintenance.conf import get_conf
    from maintenance.locking import job_lock
    from maintenance.registry import jobs
    from maintenance.runner import job_execute

    out = {"cycle": name, "load_before": os.getloadavg()[0], "jobs": []}
    with job_lock(get_conf().job_lock_file), connection.execute_wrapper(tally.sql):
        for spec in jobs():
            profile = cProfile.Profile(time.process_time) if profile_dir else None
            before = (tally.statements, tally.writes, tally.fsyncs)
            cpu, wall, times = time.process_time(), time.perf_counter(), os.times()
            if profile:
                profile.enable()
            outcome = job_execute(spec.name, trigger="bench", now=now)
            if profile:
                profile.disable()
                profile.dump_stats(profile_dir / f"{name}-{spec.name}.pstats")
            ended = os.times()
            out["jobs"].append({
                "job": spec.name, "cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
                "sys_s": ended.system - times.system,
                "statements": tally.statements - before[0], "writes": tally.writes - before[1],
                "fsyncs": tally.fsyncs - before[2], "status": outcome.status, "counts": outcome.counts,
                "after": fingerprint()})
    out["load_after"] = os.getloadavg()[0]
    return out


def agents_write(fresh: list, remembers: int, feedback: int, start, rng: random.Random) -> dict:
    """What the soak's agents write between two cycles: remembers in groups, then confirmed uses."""
    from memory.domain.requests import NodeCreate
    from memory.models import NodeRow
    from memory.services import node_confirm_use
    from memory.services.evidence import nodes_remember

    cpu = time.process_time()
    for n in range(0, remembers, GROUP):
        items = []
        for i in range(n, min(n + GROUP, remembers)):
            m = fresh[i % len(fresh)]
            items.append((NodeCreate(content=f"{m.content} (agent {i % 8}, note {i})", type=m.type, title=m.title,
                                     tags=list(m.tags), space=m.space, source=f"agent:soak-{i % 8}"), None))
        nodes_remember(items=items, now=start + timedelta(seconds=n * 0.1))
    uids = sorted(NodeRow.objects.filter(is_self=False).values_list("uid", flat=True))
    for i in range(feedback):
        node_confirm_use(ref=rng.choice(uids), now=start + timedelta(seconds=60 + i * 0.1), source="feedback")
    return {"remembers": remembers, "feedback": feedback, "cpu_s": time.process_time() - cpu}


def child(home: Path, args) -> dict:
    home.mkdir(parents=True, exist_ok=True)
    _seed_ids(args.seed)
    result, _ = store_build(home, args.memories, args.cache_dir)
    fresh = corpus(args.memories + 2000, seed=1)[args.memories:]
    tally = Tally()
    _count_fsyncs(tally)
    rng = random.Random(args.seed)
    result["cycles"] = [cycle("first", NOW, tally, args.profile_dir)]
    result["agents"] = agents_write(fresh, args.remembers, args.feedback, NOW + timedelta(seconds=5), rng)
    result["cycles"].append(cycle("warm", NOW + CYCLE_GAP, tally, args.profile_dir))
    result["cycles"].append(cycle("idle", NOW + 2 * CYCLE_GAP, tally, args.profile_dir))
    return result


def markdown(result: dict) -> str:
    lines = [f"{result['size']:,} memories; between the first and the warm cycle {result['agents']['remembers']} "
             f"remembers and {result['agents']['feedback']} confirmed uses ({result['agents']['cpu_s']:.1f} s CPU)."]
    for c in result["cycles"]:
        total = sum(j["cpu_s"] for j in c["jobs"])
        lines += ["", f"**{c['cycle']}** (load {c['load_before']:.1f} -> {c['load_after']:.1f}; CPU {total:.2f} s):",
                  "", "| job | CPU s (sys) | wall s | statements (writes) | fsyncs | status | counts | after |",
                  "|---|---:|---:|---:|---:|---|---|---|"]
        for j in c["jobs"]:
            counts = ", ".join(f"{k} {v:,}" for k, v in sorted(j["counts"].items()) if v) or "-"
            after = " ".join(f"{k[0]}:{v}" for k, v in j["after"].items())
            lines.append(f"| {j['job']} | {j['cpu_s']:.2f} ({j['sys_s']:.2f}) | {j['wall_s']:.2f} | "
                         f"{j['statements']:,} ({j['writes']:,}) | {j['fsyncs']:,} | {j['status']} | {counts} | "
                         f"{after} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--memories", type=int, default=2000)
    parser.add_argument("--remembers", type=int, default=450)
    parser.add_argument("--feedback", type=int, default=150)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--time-limit", type=float, default=60.0, help="per-job time bound (the product default)")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE_DIR)
    parser.add_argument("--profile-dir", type=Path)
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.profile_dir:
        args.profile_dir = args.profile_dir.resolve()
        args.profile_dir.mkdir(parents=True, exist_ok=True)
    if args.child:
        (args.child / "result.json").write_text(json.dumps(child(args.child / "home", args), default=str))
        return
    root = Path(tempfile.mkdtemp(prefix="ormah-bench-cycle-cpu-"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORMAH_")}
    env.update(DJANGO_SETTINGS_MODULE="ormah_site.settings", ORMAH_LLM_PROVIDER="none", ORMAH_LOG_LEVEL="WARNING",
               ORMAH_MAINTENANCE_JOB_TIME_LIMIT_SECONDS=str(args.time_limit))
    try:
        subprocess.run([sys.executable, "-m", "bench.sleep_cycle_cpu", *sys.argv[1:], "--child", str(root)],
                       cwd=REPO, env=env, check=True)
        result = json.loads((root / "result.json").read_text())
    finally:
        shutil.rmtree(root, ignore_errors=True)
    if args.json_out:
        args.json_out.write_text(json.dumps(result, default=str, indent=1))
    print(markdown(result))


if __name__ == "__main__":
    main()
