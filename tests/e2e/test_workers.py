"""`ormah serve` with two web workers. With ORMAH_WEB_SOCKETS=shared both workers accept from one loopback socket, so
a worker that stops accepting strands no new connection. With per-worker the master listens on a loopback socket per
worker (SO_REUSEPORT), the requests of clients that keep their connection are answered by both workers, and a second
`ormah serve` on the port fails instead of sharing it (ormah_site.gunicorn_conf, ormah_site.cli.serving.lock_port)."""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bench.soak_workers import listening as listening_inodes
from bench.soak_workers import polled_sockets, socket_inodes, tcp_sockets
from tests.faults.support import MANAGE, ROOT, Served, child_env, manage, wait_until
from tests.support import pg_databases

LOOPBACK = "0100007F"  # 127.0.0.1 as /proc/net/tcp writes it
# Each connection lands on a worker by a hash of its addresses: all of them on one worker has odds of 2 / 2**24.
CLIENTS = 24
ANSWERED = re.compile(r'"GET /login/ HTTP/1\.1" 200 \S+ "[^"]*" <(\d+)>$', re.MULTILINE)


def listening(port: int) -> list[str]:
    """The local address of every listening TCP socket on `port`, IPv4 and IPv6 (their inodes: listening_inodes)."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].rsplit(":", 1)
            if int(hex_port, 16) == port and fields[3] == "0A":  # 0A: LISTEN
                found.append(address)
    return found


def served_two_workers(tmp_path_factory, sockets: str):
    home = tmp_path_factory.mktemp("workers") / "home"
    done = manage(home, "init", "--name", "Robin", "--quiet")
    assert done.returncode == 0, done.stderr
    server = Served(home, extra_env={"ORMAH_WEB_WORKERS": "2", "ORMAH_WEB_THREADS": "4", "ORMAH_WATCH": "0",
                                     "ORMAH_WEB_SOCKETS": sockets})
    expected = 1 if sockets == "shared" else 2
    try:
        server.wait_ready(timeout=180)
        assert wait_until(lambda: len(server.web_workers()) == 2 and len(listening(server.port)) == expected, 180), \
            server.log_path.read_text()[-2000:]
        yield server
    finally:
        server.kill_all()
        pg_databases.drop_created()


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory):
    yield from served_two_workers(tmp_path_factory, "per-worker")


@pytest.fixture(scope="module")
def two_workers_shared(tmp_path_factory):
    yield from served_two_workers(tmp_path_factory, "shared")


def fresh_get(port: int, path: str = "/login/", timeout: float = 20, agent: str = "") -> int:
    """One request on a connection of its own, as the hook and the CLI make them (urllib sends Connection: close);
    `agent`, when given, is its User-Agent, which the access log shows (ANSWERED's quoted field)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Connection": "close", **({"User-Agent": agent} if agent else {})})
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


@pytest.mark.slow
def test_shared_both_workers_accept_from_one_loopback_socket(two_workers_shared):
    server = two_workers_shared
    assert listening(server.port) == [LOOPBACK]
    socket_inode = listening_inodes(server.port)
    polled = wait_until(lambda: all(polled_sockets(pid) & socket_inode for pid in server.web_workers())
                        and len(server.web_workers()) == 2, 120)
    assert polled


@pytest.mark.slow
def test_shared_a_worker_takes_no_connection_while_all_its_threads_serve(two_workers_shared):
    """Twelve clients connect and send the start of a request, never its end, so each thread that takes one waits on
    it until the client closes: each worker takes four, one per thread, and the other four wait in the socket's queue
    for a free thread. gunicorn's own worker would take all twelve (ormah_site.gunicorn_workers.FreeThreadWorker).
    Clients that sent nothing held a thread for only 5 s (gunicorn's wait for a request's first bytes, then the
    connection goes back to the poller and the worker takes more): on a loaded machine the [4, 4] could come and go
    within the test's 4 s deadline and 0.5 s look; now it lasts until the clients close or 10 s pass (a head not
    sent by then is cut: gunicorn_workers.REQUEST_HEAD_SECONDS), well past the 1 s look."""
    server = two_workers_shared
    workers = server.web_workers()
    silent = [socket.create_connection(("127.0.0.1", server.port), timeout=60) for _ in range(12)]
    for s in silent:
        s.sendall(b"GET /login/ HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: the headers never end
    ours = {s.getsockname()[1] for s in silent}

    def held():
        table = tcp_sockets(server.port)
        return sorted(sum(table.get(inode, ("", 0))[0] == "01" and table[inode][1] in ours
                          for inode in socket_inodes(pid)) for pid in workers)

    try:
        assert wait_until(lambda: held() == [4, 4], 120), held()
        time.sleep(1)
        assert held() == [4, 4]  # and no more: the last four are still in the queue
    finally:
        for s in silent:
            s.close()
    assert fresh_get(server.port) == 200


@pytest.mark.slow
def test_shared_a_stopped_worker_strands_no_new_connection(two_workers_shared):
    """With one socket the worker that polls takes each new connection; with a socket per worker the kernel would
    send about half of them to the stopped worker's queue, where they wait until it runs again."""
    server = two_workers_shared
    stopped, running = server.web_workers()
    # Our requests' log lines are told apart by their User-Agent, not by counting lines: a worker writes a request's
    # line after its answer, so a line of an earlier test's request can still come after this test starts (the
    # stopped worker's, once it runs again), and counting took it for one of ours (one failure at load 7).
    agent = f"stranded-{os.getpid()}-{time.monotonic_ns()}"
    os.kill(stopped, signal.SIGSTOP)
    try:
        statuses = [fresh_get(server.port, timeout=60, agent=agent) for _ in range(12)]
    finally:
        os.kill(stopped, signal.SIGCONT)
    assert statuses == [200] * 12
    ours = re.compile(rf'"GET /login/ HTTP/1\.1" 200 \S+ "{agent}" <(\d+)>$', re.MULTILINE)
    answers = wait_until(lambda: len(found := ours.findall(server.log_path.read_text())) >= 12 and found, 120)
    assert len(answers) == 12
    assert {int(pid) for pid in answers} == {running}


@pytest.mark.slow
def test_a_socket_per_worker_listens_on_loopback_only(two_workers):
    assert listening(two_workers.port) == [LOOPBACK, LOOPBACK]


@pytest.mark.slow
def test_each_worker_accepts_on_a_socket_of_its_own(two_workers):
    sockets = listening_inodes(two_workers.port)

    def own_sockets():
        """Each worker's polled sockets of the port, once both workers poll one (a forked worker polls a moment
        after it exists)."""
        polled = [polled_sockets(pid) & sockets for pid in two_workers.web_workers()]
        return polled if [len(p) for p in polled] == [1, 1] else None

    polled = wait_until(own_sockets, 120)
    assert polled
    assert polled[0] | polled[1] == sockets


@pytest.mark.slow
def test_clients_that_keep_their_connection_are_answered_by_both_workers(two_workers):
    server = two_workers
    start = threading.Barrier(CLIENTS)

    def client() -> int:
        """Connect when every client is ready (as agents started together), ask twice; the connections used."""
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        start.wait(timeout=120)
        used = set()
        try:
            for _ in range(2):
                conn.request("GET", "/login/")
                response = conn.getresponse()
                response.read()
                assert response.status == 200
                used.add(conn.sock.getsockname())
        finally:
            conn.close()
        return len(used)

    with ThreadPoolExecutor(CLIENTS) as pool:
        connections_used = list(pool.map(lambda _: client(), range(CLIENTS)))
    assert connections_used == [1] * CLIENTS  # each client's two requests went over one kept-alive connection
    # the access log names the pid of the worker that answered (its last field)
    answers = wait_until(lambda: len(ANSWERED.findall(server.log_path.read_text())) >= 2 * CLIENTS and
                         ANSWERED.findall(server.log_path.read_text()), 60)
    assert len(answers) == 2 * CLIENTS
    assert {int(pid) for pid in answers} == set(server.web_workers())


@pytest.mark.slow
def test_a_second_server_on_the_port_fails_instead_of_sharing_it(two_workers, tmp_path):
    server = two_workers
    port = str(server.port)
    # a temporary folder of its own, as a server started from another shell or service may have: the lock ignores it
    env = child_env(server.home, ORMAH_WEB_WORKERS="2", ORMAH_WEB_THREADS="4", TMPDIR=str(tmp_path))
    # `ormah serve` first tries to bind the address as it is (without SO_REUSEPORT): the sockets refuse
    cli = subprocess.run([sys.executable, "-m", "ormah_site.cli", "serve", "--port", port], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert cli.returncode == 1
    assert f"cannot serve on 127.0.0.1:{port}: address already in use" in cli.stderr
    # past that check (`manage.py serve` does not make it; a server just starting may not listen yet): the lock
    second = subprocess.Popen([sys.executable, MANAGE, "serve", "--port", port], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = second.communicate(timeout=120)
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.wait()
    assert second.returncode == 1, out + err
    assert (f"cannot serve on port {port}: another `ormah serve` (pid {server.proc.pid}) is running there"
            in err)
    assert listening(server.port) == [LOOPBACK, LOOPBACK]


@pytest.mark.slow
def test_an_aborted_worker_says_where_its_threads_were_and_its_replacement_takes_its_socket(two_workers):
    server = two_workers
    aborted = server.web_workers()[0]
    os.kill(aborted, signal.SIGABRT)  # what gunicorn sends a worker whose main loop stopped reporting
    sockets = listening_inodes(server.port)

    def own_sockets_again():
        workers = server.web_workers()
        if len(workers) != 2 or aborted in workers:
            return None
        polled = [polled_sockets(pid) & sockets for pid in workers]
        return polled if [len(p) for p in polled] == [1, 1] else None

    polled = wait_until(own_sockets_again, 120)
    assert polled and polled[0] | polled[1] == sockets
    log = server.log_path.read_text()
    assert "(most recent call first)" in log and 'File "' in log

