"""Two app hosts on one PostgreSQL: every acknowledged write is there once, a sleep cycle runs once (issue 16).

    python -m bench.two_hosts [--seconds 60] [--threads 8] [--database-url URL] [--keep] [--write-docs]

A throwaway PostgreSQL cluster (scripts/pg-cluster.sh; or an empty database given by --database-url) and two
`ormah serve` processes on two loopback ports, each with its own ORMAH_HOME (its own folder, token file, lock
files), sharing only the database and the one secret of docs/team-server.md (ORMAH_SECRET_KEY, ORMAH_API_TOKEN).
`ormah init` runs on host A, then on host B; both servers start at once (gunicorn, job cluster, watcher).

Then, for `--seconds`, `--threads` threads per host write new memories through that host's API (POST
/api/agent/remember, each content unique, no retries); a write is acknowledged when it answers 201. Checked after:
- every acknowledged write is in the index (memory_noderow) exactly once, and so is its document
  (the documents table, the canonical store on PostgreSQL) when that table exists; no write appears twice;
- a sleep cycle started on both hosts at once (POST /api/admin/tasks/run-all, released together) executes once:
  each job that holds the maintenance lock runs on one host and reports busy on the other, and no two runs of
  such jobs overlap in time anywhere in the run ledger (the queued and scheduled runs of both clusters included);
- the job schedules exist once (django-q2's table), not once per host;
- a UI session signed in on host A is valid on host B, and both accept the one API token.
The process exits 1 when a check fails (the checks: bench/two_hosts_checks.py). Load average and the CPU time of
the servers are printed beside the numbers. `--write-docs` replaces its marked block in the "Two hosts on one PostgreSQL" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench._common import REPO, machine, percentile, write_block
from bench.two_hosts_checks import (
    MARK,
    NOT_EXCLUSIVE,
    check_cycle,
    check_sessions,
    check_writes,
    rows,
    verdicts,
)

SECTION = "Two hosts on one PostgreSQL"
MANAGE = str(REPO / "manage.py")
CLUSTER = str(REPO / "scripts" / "pg-cluster.sh")
HOSTS = ("A", "B")


# ---------------------------------------------------------------------------
# The database and the servers
# ---------------------------------------------------------------------------

def _cluster_start() -> tuple[str, str]:
    url = subprocess.run(["bash", CLUSTER], check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    folder = re.search(r"host=([^&]+)", url).group(1)
    return url, folder


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(home: Path, url: str, secret_key: str, token: str) -> dict[str, str]:
    env = {**os.environ, "ORMAH_HOME": str(home), "DJANGO_SETTINGS_MODULE": "ormah_site.settings",
           "ORMAH_DATABASE_URL": url, "ORMAH_SECRET_KEY": secret_key, "ORMAH_API_TOKEN": token,
           "ORMAH_LOG_LEVEL": "WARNING", "ORMAH_LLM_PROVIDER": "none"}
    for key in ("ORMAH_DB_PATH", "ORMAH_MEMORY_DIR", "ORMAH_TOKEN_FILE", "ORMAH_LOG_DIR", "ORMAH_TEST_DATABASE_URL"):
        env.pop(key, None)
    return env


def _request(port: int, method: str, path: str, token: str, body: dict | None = None,
             timeout: float = 120) -> tuple[int | None, object]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=None if body is None else json.dumps(body),
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
        response = conn.getresponse()
        raw = response.read()
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw[:300].decode(errors="replace")
    except (OSError, http.client.HTTPException) as exc:
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        conn.close()


def _wait_healthy(port: int, token: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, _ = _request(port, "GET", "/api/admin/health", token, timeout=30)
        if status == 200:
            return
        time.sleep(0.5)
    raise RuntimeError(f"the server on port {port} did not answer /api/admin/health in {seconds:.0f} s")


# ---------------------------------------------------------------------------
# Writers
# ---------------------------------------------------------------------------

class Writer(threading.Thread):
    """One writer: a keep-alive connection to one host, new unique memories back to back until told to stop."""

    def __init__(self, host: str, index: int, port: int, token: str, stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.host, self.index, self.port, self.token, self.stop = host, index, port, token, stop
        self.acked: list[tuple[str, str]] = []  # (marker, node id)
        self.failed: list[tuple[str, str]] = []  # (marker, what came back)
        self.latency: list[float] = []

    def run(self) -> None:
        conn = None
        n = 0
        while not self.stop.is_set():
            n += 1
            marker = f"{self.host.lower()}{self.index}n{n}"
            body = {"content": f"{MARK} {marker}: host {self.host} thread {self.index} note {n} about "
                               f"{secrets.token_hex(6)}", "source": f"bench:two_hosts:{self.host}"}
            started = time.perf_counter()
            try:
                if conn is None:
                    conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                conn.request("POST", "/api/agent/remember", body=json.dumps(body), headers={
                    "Authorization": f"Bearer {self.token}", "Content-Type": "application/json"})
                response = conn.getresponse()
                raw = response.read()
                if response.status == 201:
                    self.acked.append((marker, json.loads(raw)["node"]["id"]))
                else:
                    self.failed.append((marker, f"{response.status} {raw[:200].decode(errors='replace')}"))
            except (OSError, http.client.HTTPException, ValueError) as exc:
                self.failed.append((marker, f"{type(exc).__name__}: {exc}"))
                if conn is not None:
                    conn.close()
                conn = None
            self.latency.append(time.perf_counter() - started)
        if conn is not None:
            conn.close()


# ---------------------------------------------------------------------------
# Run
# ---------------------------------------------------------------------------

def _cycle_from_both(ports: dict[str, int], token: str) -> dict[str, object]:
    barrier, answers = threading.Barrier(len(ports)), {}

    def start(host: str) -> None:
        barrier.wait()
        status, body = _request(ports[host], "POST", "/api/admin/tasks/run-all", token, timeout=1800)
        answers[host] = body if status == 200 else f"{status}: {body}"

    threads = [threading.Thread(target=start, args=(h,)) for h in ports]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return answers


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def run(args) -> dict:
    root = Path(tempfile.mkdtemp(prefix="ormah-two-hosts-"))
    cluster = None
    url = args.database_url
    if not url:
        url, cluster = _cluster_start()
    secret_key, token = secrets.token_urlsafe(50), secrets.token_urlsafe(32)
    homes = {h: root / f"host-{h.lower()}" for h in HOSTS}
    envs = {h: _env(homes[h], url, secret_key, token) for h in HOSTS}
    ports = {h: _free_port() for h in HOSTS}
    servers: dict[str, subprocess.Popen] = {}
    logs = {}
    result: dict = {"load_before": _load(), "ports": ports}
    try:
        for h in HOSTS:  # one after the other, as an operator would: the second finds the database ready
            subprocess.run([sys.executable, MANAGE, "init", "--quiet"], env=envs[h], check=True)
        for h in HOSTS:
            logs[h] = open(root / f"serve-{h}.out", "w")  # noqa: SIM115
            servers[h] = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", str(ports[h])], env=envs[h],
                                          stdout=logs[h], stderr=subprocess.STDOUT, start_new_session=True)
        for h in HOSTS:
            _wait_healthy(ports[h], token)
        result["schedules"] = rows(url, "SELECT count(*) FROM django_q_schedule WHERE name LIKE 'ormah:%'")[0][0]

        stop = threading.Event()
        writers = [Writer(h, i, ports[h], token, stop) for h in HOSTS for i in range(args.threads)]
        cpu0 = os.times()
        t0 = time.monotonic()
        for w in writers:
            w.start()
        time.sleep(args.seconds)
        stop.set()
        for w in writers:
            w.join(timeout=300)
        seconds = time.monotonic() - t0
        result["load_after_writes"] = _load()
        result["writes"] = {
            h: {"acknowledged": sum(len(w.acked) for w in writers if w.host == h),
                "failed": sum(len(w.failed) for w in writers if w.host == h),
                "per_s": sum(len(w.acked) for w in writers if w.host == h) / seconds,
                "p50_ms": percentile([x for w in writers if w.host == h for x in w.latency], 50) * 1000,
                "p95_ms": percentile([x for w in writers if w.host == h for x in w.latency], 95) * 1000,
                "failures": [f for w in writers if w.host == h for f in w.failed][:5]}
            for h in HOSTS}
        result["seconds"] = seconds
        result["check_writes"] = check_writes(url, writers)

        cycle_started = time.monotonic()
        answers = _cycle_from_both(ports, token)
        result["cycle_seconds"] = time.monotonic() - cycle_started
        result["check_cycle"] = check_cycle(url, answers)
        result["check_cycle"]["answers_not_lists"] = {h: a for h, a in answers.items() if not isinstance(a, list)}
        result["check_sessions"] = check_sessions(ports, (homes["A"] / "ui_password").read_text().strip())
        result["load_after"] = _load()
        result["cpu_bench_s"] = sum(os.times()[:2]) - sum(cpu0[:2])
    finally:
        for h, server in servers.items():
            try:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=60)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                os.killpg(server.pid, signal.SIGKILL)
                server.wait(timeout=60)
            logs[h].close()
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        result["cpu_servers_s"] = usage.ru_utime + usage.ru_stime  # both servers and their children, inits included
        result["serve_tail"] = {h: (root / f"serve-{h}.out").read_text(errors="replace")[-1500:] for h in servers}
        result["machine"] = machine(root)
        if cluster:
            subprocess.run(["bash", CLUSTER, "stop", cluster], check=False)
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return result


def markdown(result: dict, args) -> str:
    facts, w, c = result["machine"], result["check_writes"], result["check_cycle"]
    lines = [
        f"`python -m bench.two_hosts --seconds {args.seconds:g} --threads {args.threads}`: a throwaway PostgreSQL "
        f"cluster with pgvector (fsync off), two `ormah serve` (gunicorn in its default layout, a job cluster, the "
        f"watcher) "
        f"on two loopback ports with their own ORMAH_HOME, {args.threads} threads writing new memories through each "
        f"for {result['seconds']:.0f} s (keep-alive, no think time, no retries), then a sleep cycle started on both "
        f"at once.",
        "",
        f"Machine: {facts['cpu']}, {facts['cpus']} CPUs, {facts['ram']}, {facts['os']}, Python {facts['python']}. "
        f"Load average before / after the writes / at the end: {result['load_before']} / "
        f"{result['load_after_writes']} / {result['load_after']}. CPU time of the servers (both, with their "
        f"inits): {result['cpu_servers_s']:.0f} s.",
        "",
        "| Host | Acknowledged writes | Per second | p50 | p95 | Failed |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for h, r in result["writes"].items():
        lines.append(f"| {h} | {r['acknowledged']:,} | {r['per_s']:.1f} | {r['p50_ms']:.0f} ms | {r['p95_ms']:.0f} ms "
                     f"| {r['failed']} |")
    lines += ["", f"Index: {w['acknowledged']:,} acknowledged, {len(w['missing_from_index'])} missing, "
                  f"{len(w['twice_in_index'])} twice, {w['unacknowledged_in_index']} present without an "
                  f"acknowledgement (a write that failed after its commit)."
              + (f" Documents table ({w['documents_table']}): {len(w['missing_from_documents'])} missing, "
                 f"{len(w['twice_in_documents'])} twice." if w["documents_table"]
                 else " The documents table does not exist in this build."),
              "", f"Sleep cycle started on both hosts at once ({result['cycle_seconds']:.1f} s):", "",
              "| Job | Host A | Host B |", "|---|---|---|"]
    for job, statuses in c["per_job"].items():
        lines.append(f"| {job}{' (no lock)' if job in NOT_EXCLUSIVE else ''} | {statuses.get('A', '-')} | "
                     f"{statuses.get('B', '-')} |")
    lines += ["", f"Run ledger (trigger/status: runs): {c['ledger']}; at most {c['most_lock_holding_runs_at_once']} "
                  "lock-holding run at any instant.", ""]
    lines += [f"Error of {where}: `{text}`" for where, text in c["errors"].items()] + ([""] if c["errors"] else [])
    failures = [f for r in result["writes"].values() for f in r["failures"]]
    lines += [f"First failed writes: {'; '.join(f'`{m}: {t[:150]}`' for m, t in failures[:3])}", ""] if failures else []
    lines += [f"- {'PASS' if ok else 'FAIL'}: {name}" for name, ok in verdicts(result).items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0, help="how long the writers write")
    parser.add_argument("--threads", type=int, default=8, help="writer threads per host")
    parser.add_argument("--database-url", help="an empty PostgreSQL database with pgvector (default: a throwaway "
                                               "cluster from scripts/pg-cluster.sh)")
    parser.add_argument("--json", type=Path, help="also write the full result here")
    parser.add_argument("--keep", action="store_true", help="keep the homes and the servers' output")
    parser.add_argument("--write-docs", action="store_true",
                        help=f'replace its marked block in the "{SECTION}" section of '
                                                                  "docs/benchmarks.md")
    args = parser.parse_args(argv)
    result = run(args)
    text = markdown(result, args)
    print(text)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2, default=str))
    if args.write_docs:
        write_block("two_hosts", text)
    return 0 if all(verdicts(result).values()) else 1


if __name__ == "__main__":
    sys.exit(main())
