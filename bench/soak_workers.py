"""Which web worker served what in a soak: the connections each held, the agents' requests it answered, its CPU.

Read from Linux's /proc, beside the server, so any checkout (`--repo`) can be measured. A worker's connection is a
socket in its file table (/proc/PID/fd) whose row in /proc/net/tcp (or tcp6) has the server's port as its local
port and is established; the row's remote address is the client's end. Sampled once a second: a kept-alive
connection lives the whole window and is seen in every sample, while a connection per request lives a few hundred
milliseconds and is seen only now and then, so its count is the worker's answered requests (the access log ends
each line with the answering worker's pid), one connection each.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from pathlib import Path

LISTEN, ESTABLISHED = "0A", "01"  # the state column of /proc/net/tcp
# An agent's request in the access log (ormah_site.management.commands.serve.ACCESS_LOG_FORMAT): the pid ends it.
AGENT_REQUEST = re.compile(r'"POST /api/agent/\S+ HTTP/1\.[01]" \d{3} .*<(\d+)>$', re.MULTILINE)


def tcp_sockets(port: int, tables: tuple[str, ...] = ("/proc/net/tcp", "/proc/net/tcp6")) -> dict[int, tuple]:
    """inode -> (state, remote port) of every TCP socket whose local port is `port`."""
    found = {}
    for table in tables:
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[9] != "0":
                found[int(fields[9])] = (fields[3], int(fields[2].rsplit(":", 1)[1], 16))
    return found


def socket_inodes(pid: int) -> set[int]:
    """The inodes of the sockets process `pid` holds open (empty when it is gone)."""
    inodes = set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return inodes
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:  # closed since the listing
            continue
        if target.startswith("socket:["):
            inodes.add(int(target[8:-1]))
    return inodes


def polled_sockets(pid: int) -> set[int]:
    """The inodes of the sockets process `pid` watches with epoll (each watched fd is a `tfd:` line of its fdinfo)."""
    targets, watched = {}, set()
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return set()
    for fd in fds:
        try:
            targets[fd] = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
    for fd, target in targets.items():
        if target == "anon_inode:[eventpoll]":
            try:
                info = Path(f"/proc/{pid}/fdinfo/{fd}").read_text()
            except OSError:
                continue
            watched.update(line.split()[1] for line in info.splitlines() if line.startswith("tfd:"))
    return {int(targets[fd][8:-1]) for fd in watched if targets.get(fd, "").startswith("socket:[")}


def listening(port: int) -> set[int]:
    """The inodes of the sockets listening on `port`: one shared by the workers, or one per worker."""
    return {inode for inode, (state, _) in tcp_sockets(port).items() if state == LISTEN}


def agent_requests(log_text: str) -> Counter:
    """pid -> the agents' requests it answered, from access-log lines."""
    return Counter(int(pid) for pid in AGENT_REQUEST.findall(log_text))


class WorkerSplit:
    """The connections each web worker held over a window, sampled by `sample`, and what the log says it answered."""

    def __init__(self, port: int, log: Path, threads: int) -> None:
        self.port, self.log, self.threads = port, log, threads
        self.seen: dict[int, set[int]] = {}  # worker pid -> the client ports of the connections it held
        self.open: list[tuple[int, ...]] = []  # per sample, the connections each worker held at that moment
        self.listeners: set[int] = set()
        self.offset = log.stat().st_size if log.exists() else 0

    def sample(self, workers: list[int]) -> None:
        table = tcp_sockets(self.port)
        self.listeners |= {inode for inode, (state, _) in table.items() if state == LISTEN}
        now = []
        for pid in sorted(workers):
            held = self.seen.setdefault(pid, set())
            ports = {table[inode][1] for inode in socket_inodes(pid) if table.get(inode, ("",))[0] == ESTABLISHED}
            held |= ports
            now.append(len(ports))
        self.open.append(tuple(now))

    def crowding(self) -> dict:
        """From the samples (meaningful with a connection per request, where an open connection is a request being
        served or waiting for a thread): the mean open connections per worker, the share of samples in which a
        worker held more than its threads while another had a thread free (a request waiting that need not), and the
        mean difference between the fullest and the emptiest worker."""
        samples = [s for s in self.open if len(s) > 1]
        if not samples:
            return {}
        means = [round(sum(s[i] for s in samples) / len(samples), 2) for i in range(len(samples[0]))]
        crowded = sum(max(s) > self.threads and min(s) < self.threads for s in samples)
        return {"open_mean": means, "crowded_share": round(crowded / len(samples), 3), "samples": len(samples),
                "spread_mean": round(sum(max(s) - min(s) for s in samples) / len(samples), 2)}

    def finish(self, cpu: dict[int, list], seconds: float, per_request: bool, agent_ports: set[int]) -> list[dict]:
        """Per worker (pid order): its CPU seconds and cores over the window (`cpu`: pid -> [role, first, last]),
        the agents' requests it answered, and the agents' connections it served: with a connection per request its
        requests, else the agents' kept connections it held (`agent_ports`: the agents' local ports; the sleep
        cycle's polls are other clients)."""
        with open(self.log, "rb") as f:
            f.seek(self.offset)
            answered = agent_requests(f.read().decode(errors="replace"))
        rows = []
        for pid in sorted(set(self.seen) | set(answered)):
            role, first, last = cpu.get(pid, ["gunicorn worker", 0.0, 0.0])
            rows.append({"pid": pid, "role": role, "cpu_s": round(last - first, 2),
                         "cores": round((last - first) / seconds, 3) if seconds else 0.0,
                         "requests": answered.get(pid, 0),
                         "connections": answered.get(pid, 0) if per_request else
                         len(self.seen.get(pid, set()) & agent_ports)})
        return rows


def balance(rows: list[dict]) -> dict:
    """How evenly the workers shared the window: the busiest worker's share of the requests, of the connections and
    of the workers' CPU (0.5 is even for two workers)."""
    out = {}
    for key in ("requests", "connections", "cpu_s"):
        total = sum(r[key] for r in rows)
        out[f"max_share_{key}"] = round(max((r[key] for r in rows), default=0) / total, 3) if total else float("nan")
    return out
