"""bench.soak_workers: what each web worker served in a soak, read from /proc and the access log.

Real sockets on loopback stand in for the workers (this process holds the server's end of each connection), so the
/proc tables read are the kernel's own.
"""

from __future__ import annotations

import os
import socket
import sys
from types import SimpleNamespace

import pytest

from bench.soak_report import split_cell, workers_line
from bench.soak_workers import WorkerSplit, agent_requests, balance, listening, polled_sockets, tcp_sockets

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads Linux's /proc")

LOG = """\
Ormah is serving on http://127.0.0.1:40000/ (Ctrl-C stops)
127.0.0.1 - - [27/Nov/2026:23:36:33 +0000] "POST /api/agent/recall HTTP/1.1" 200 5777 "-" <11019>
127.0.0.1 - - [27/Nov/2026:23:36:33 +0000] "POST /api/agent/remember HTTP/1.1" 201 412 "Python-urllib/3.11" <11028>
127.0.0.1 - - [27/Nov/2026:23:36:34 +0000] "POST /api/agent/whisper HTTP/1.1" 500 12 "-" <11019>
127.0.0.1 - - [27/Nov/2026:23:37:07 +0000] "GET /api/admin/tasks/runs HTTP/1.1" 200 158 "-" <11019>
127.0.0.1 - - [27/Nov/2026:23:37:08 +0000] "POST /jobs/sleep-cycle/ HTTP/1.1" 200 158 "-" <11028>
2026-11-27 23:37:22,154 WARNING __main__ The jobs process did not stop in 15 s; killing it
"""


@pytest.fixture
def server():
    """A listening loopback socket and three clients connected to it, their server ends accepted here."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    clients = [socket.create_connection(("127.0.0.1", port)) for _ in range(3)]
    accepted = [listener.accept()[0] for _ in clients]
    try:
        yield SimpleNamespace(listener=listener, port=port, clients=clients, accepted=accepted)
    finally:
        for s in [*clients, *accepted, listener]:
            s.close()


def test_the_agents_requests_are_counted_per_answering_pid_and_nothing_else():
    # the admin API's poll and the jobs screen's POST are the sleep cycle's, not an agent's; a 500 still counts
    assert agent_requests(LOG) == {11019: 2, 11028: 1}


def test_the_port_s_sockets_are_read_from_the_kernels_table(server):
    table = tcp_sockets(server.port)
    states = sorted(state for state, _ in table.values())
    assert states == ["01", "01", "01", "0A"]  # three established server ends, one listener
    assert {port for state, port in table.values() if state == "01"} == {c.getsockname()[1] for c in server.clients}
    assert listening(server.port) == {os.fstat(server.listener.fileno()).st_ino}


def test_the_split_counts_the_agents_kept_connections_a_worker_holds(server, tmp_path):
    log = tmp_path / "serve.out"
    log.write_text("before the window " + LOG)
    split = WorkerSplit(server.port, log, threads=4)
    with open(log, "a") as f:
        f.write('127.0.0.1 - - [x] "POST /api/agent/recall HTTP/1.1" 200 5 "-" <%d>\n' % os.getpid())
    split.sample([os.getpid()])
    agent_ports = {c.getsockname()[1] for c in server.clients[:2]}  # the third is another client (a poll)
    cpu = {os.getpid(): ["gunicorn worker 1", 1.0, 3.5]}
    kept = split.finish(cpu, 10.0, per_request=False, agent_ports=agent_ports)
    assert kept == [{"pid": os.getpid(), "role": "gunicorn worker 1", "cpu_s": 2.5, "cores": 0.25, "requests": 1,
                     "connections": 2}]
    # a connection per request: the connections served are the requests the worker answered in the window only
    assert split.finish(cpu, 10.0, per_request=True, agent_ports=set())[0]["connections"] == 1


def test_a_polled_socket_is_found_in_the_processes_epoll_set(server):
    import selectors

    inode = os.fstat(server.listener.fileno()).st_ino
    assert inode not in polled_sockets(os.getpid())
    with selectors.EpollSelector() as poller:
        poller.register(server.listener, selectors.EVENT_READ)
        assert inode in polled_sockets(os.getpid())


def test_the_report_prints_each_workers_split_and_the_busiest_share():
    rows = [{"pid": 11, "role": "gunicorn worker 1", "cpu_s": 30.0, "cores": 0.5, "requests": 600, "connections": 5},
            {"pid": 12, "role": "gunicorn worker 2", "cpu_s": 20.0, "cores": 0.33, "requests": 400, "connections": 3}]
    summary = {"web_workers": rows, "balance": balance(rows), "listening_sockets": 2}
    assert summary["balance"] == {"max_share_requests": 0.6, "max_share_connections": 0.625, "max_share_cpu_s": 0.6}
    assert workers_line(summary) == (
        "Web workers (2 listening sockets): pid 11: 5 connections, 600 requests, 30.0 s CPU (0.50 cores); pid 12: 3 "
        "connections, 400 requests, 20.0 s CPU (0.33 cores). The busiest worker's share: 62% of the connections, 60% "
        "of the requests, 60% of the workers' CPU.")
    assert split_cell(summary) == "5 / 3 conn.; 600 / 400 req.; 0.50 + 0.33 cores"


def test_crowding_counts_samples_where_a_request_waits_beside_a_free_thread(server, tmp_path):
    split = WorkerSplit(server.port, tmp_path / "serve.out", threads=4)
    split.sample([os.getpid()])
    assert split.open == [(3,)] and split.crowding() == {}  # one worker: nothing to compare
    split.open = [(6, 2), (4, 4), (5, 4), (2, 1), (1, 7)]
    assert split.crowding() == {"open_mean": [3.6, 3.6], "crowded_share": 0.4, "samples": 5,
                               "spread_mean": 2.4}
