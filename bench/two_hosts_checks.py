"""What bench/two_hosts.py checks after its run, read straight from the database and the hosts, and the verdicts.

Every acknowledged write once in the index (and the documents table), the sleep cycle from both hosts executed
once with no two lock-holding job runs at once, and a session signed in on host A valid on host B.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

NOT_EXCLUSIVE = {"index_updater"}  # maintenance/registry.py: the only job that does not hold the maintenance lock
MARK = "Two-host write"
DOCUMENT_TABLES = ("docstore_documentrow", "memory_documentrow")  # the canonical store on PostgreSQL, where it exists


class WriteLog(Protocol):
    """What a writer thread kept: (marker, node id) of each acknowledged write, (marker, answer) of each failure."""

    acked: list[tuple[str, str]]
    failed: list[tuple[str, str]]


def rows(url: str, sql: str, params: tuple | None = None) -> list[tuple]:
    """The rows a query returns, on a connection of its own."""
    import psycopg

    with psycopg.connect(url) as conn:  # libpq reads the same URL as the servers (host= and port= in its query)
        return conn.execute(sql, params).fetchall()


def check_writes(url: str, writers: Sequence[WriteLog]) -> dict:
    """Every acknowledged write in the index (and the documents table) once, and no write twice."""
    acked = {node_id: marker for w in writers for marker, node_id in w.acked}
    markers = [m for w in writers for m, _ in w.acked]
    indexed = Counter(uid for (uid,) in rows(url, "SELECT uid FROM memory_noderow WHERE content LIKE %s",
                                              (MARK + " %",)))
    out = {
        "acknowledged": len(acked), "acknowledged_ids_unique": len(acked) == len(markers),
        "failed": sum(len(w.failed) for w in writers),
        "missing_from_index": sorted(set(acked) - set(indexed)),
        "twice_in_index": sorted(uid for uid, n in indexed.items() if n > 1),
        "unacknowledged_in_index": len(set(indexed) - set(acked)),
    }
    by_marker = Counter(m for (content,) in rows(url, "SELECT content FROM memory_noderow WHERE content LIKE %s",
                                                  (MARK + " %",)) for m in [content.split(":")[0].split()[-1]])
    out["same_write_twice"] = sorted(m for m, n in by_marker.items() if n > 1)
    table = next((t for t in DOCUMENT_TABLES if rows(url, "SELECT to_regclass(%s) IS NOT NULL", (t,))[0][0]), None)
    out["documents_table"] = table
    if table:
        stored = Counter(node_id for (node_id,) in rows(
            url, f"SELECT node_id FROM {table} WHERE path LIKE 'nodes/%%' AND node_id = ANY(%s)", (list(acked),)))
        out["missing_from_documents"] = sorted(set(acked) - set(stored))
        out["twice_in_documents"] = sorted(uid for uid, n in stored.items() if n > 1)
    return out


def check_cycle(url: str, answers: dict[str, object]) -> dict:
    """Per job, what each host's run-all answered; and the largest number of lock-holding runs at one instant."""
    per_job: dict[str, dict[str, str]] = defaultdict(dict)
    errors: dict[str, str] = {}
    for host, outcomes in answers.items():
        for outcome in outcomes if isinstance(outcomes, list) else []:
            per_job[outcome["job"]][host] = outcome["status"]
            if outcome["status"] == "error":
                errors[f"{outcome['job']} on {host}"] = outcome["error"][:300]
    locked = {job: s for job, s in per_job.items() if job not in NOT_EXCLUSIVE}
    once = len(per_job) == 8 and all(len(s) == 2 and list(s.values()).count("busy") == 1 for s in locked.values())
    clean = all(status in ("ok", "partial", "busy") for s in per_job.values() for status in s.values())
    runs = rows(url, "SELECT job, status, trigger, started_at, finished_at FROM maintenance_jobrunrow")
    spans = sorted((start, end or datetime.max.replace(tzinfo=start.tzinfo)) for job, status, _, start, end in runs
                   if job not in NOT_EXCLUSIVE and status != "busy")
    most, ends = 0, []
    for start, end in spans:  # sweep: how many runs that held the lock were running at each start
        ends = [e for e in ends if e > start] + [end]
        most = max(most, len(ends))
    triggers = Counter((trigger, status) for _, status, trigger, _, _ in runs)
    return {"per_job": dict(per_job), "executes_once": once, "no_errors": clean, "errors": errors,
            "most_lock_holding_runs_at_once": most,
            "ledger": {f"{t}/{s}": n for (t, s), n in sorted(triggers.items())}}


def check_sessions(ports: dict[str, int], password: str) -> dict:
    """Sign in on host A's login page; the same cookies then open host B's jobs page."""
    import httpx

    with httpx.Client(timeout=120) as browser:
        page = browser.get(f"http://127.0.0.1:{ports['A']}/login/").text
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        signed = browser.post(f"http://127.0.0.1:{ports['A']}/login/",
                              data={"username": "ormah", "password": password, "csrfmiddlewaretoken": csrf})
        on_b = browser.get(f"http://127.0.0.1:{ports['B']}/jobs/", follow_redirects=False)
    return {"signed_in_on_a": signed.status_code, "jobs_page_on_b": on_b.status_code}


def verdicts(result: dict) -> dict[str, bool]:
    """Each check's name and whether it passed."""
    w, c, s = result["check_writes"], result["check_cycle"], result["check_sessions"]
    out = {
        "every acknowledged write in the index once": not w["missing_from_index"] and not w["twice_in_index"]
        and not w["same_write_twice"] and w["acknowledged_ids_unique"] and w["acknowledged"] > 0,
        "the sleep cycle from both hosts at once executed once (each locked job busy on one host)":
            c["executes_once"],
        "no job of the two cycles ended in an error": c["no_errors"],
        "never two lock-holding job runs at once (whole ledger)": c["most_lock_holding_runs_at_once"] == 1,
        "each job schedule exists once": result["schedules"] == 8,
        "a session from host A is valid on host B": s == {"signed_in_on_a": 302, "jobs_page_on_b": 200},
    }
    if w["documents_table"]:
        out["every acknowledged write in the documents table once"] = (not w["missing_from_documents"]
                                                                         and not w["twice_in_documents"])
    return out
