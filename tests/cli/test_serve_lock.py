"""Claims: `ormah serve` holds a lock per port for its life (and the life of the program it execs); a second
holder is refused with the first one's pid, whatever its temporary folder, and the lock is free again once its
holder closes it or dies. A name held by something else than a server (not listening) leaves the file lock, which
refuses a second holder the same way."""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from ormah_site.cli.serving import PortUnavailable, lock_port
from tests.faults.support import ROOT, free_port


def test_a_second_lock_of_the_port_is_refused_with_the_holders_pid():
    port = free_port()
    held = lock_port(port)
    try:
        with pytest.raises(PortUnavailable) as refused:
            lock_port(port)
    finally:
        os.close(held)
    assert str(refused.value).startswith(f"cannot serve on port {port}: another `ormah serve` (pid {os.getpid()}) "
                                         "is running there")


def test_the_lock_is_free_once_its_holder_closes_it():
    port = free_port()
    os.close(lock_port(port))
    os.close(lock_port(port))


def test_the_lock_survives_exec_and_dies_with_the_process():
    port = free_port()
    # the child takes the lock, then execs a program that reports whether a new lock of the port is refused
    code = ("import os, sys; from ormah_site.cli.serving import lock_port; lock_port(int(sys.argv[1])); "
            "os.execv(sys.executable, [sys.executable, '-c', "
            "'import sys; from ormah_site.cli.serving import PortUnavailable, lock_port\\n"
            "try:\\n    lock_port(int(sys.argv[1]))\\nexcept PortUnavailable:\\n    sys.exit(7)', sys.argv[1]])")
    done = subprocess.run([sys.executable, "-c", code, str(port)], cwd=ROOT, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 7, done.stderr
    os.close(lock_port(port))  # the child is gone: the lock with it


def test_a_server_with_another_temporary_folder_is_refused(tmp_path):
    port = free_port()
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    # the first holder (TMPDIR a) prints its pid once it holds the lock, then waits for its stdin to close
    holder = subprocess.Popen([sys.executable, "-c", "import os, sys; from ormah_site.cli.serving import lock_port; "
                               "lock_port(int(sys.argv[1])); print(os.getpid(), flush=True); sys.stdin.read()",
                               str(port)], cwd=ROOT, env={**os.environ, "TMPDIR": str(tmp_path / "a")},
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        pid = holder.stdout.readline().strip()
        second = subprocess.run([sys.executable, "-c", "import sys; from ormah_site.cli.serving import lock_port; "
                                 "lock_port(int(sys.argv[1]))", str(port)], cwd=ROOT,
                                env={**os.environ, "TMPDIR": str(tmp_path / "b")}, capture_output=True, text=True,
                                timeout=60)
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert pid == str(holder.pid)
    assert second.returncode == 1
    assert (f"PortUnavailable: cannot serve on port {port}: another `ormah serve` (pid {pid}) is running there"
            in second.stderr)


def test_a_name_held_by_a_socket_that_does_not_listen_leaves_the_file_lock():
    port = free_port()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as squatter:
        squatter.bind(f"\0ormah-serve-{os.getuid()}-{port}")
        held = lock_port(port)
        try:
            with pytest.raises(PortUnavailable) as refused:
                lock_port(port)
        finally:
            os.close(held)
            (Path(pwd.getpwuid(os.getuid()).pw_dir) / ".cache" / "ormah" / f"serve-{port}.lock").unlink()
    assert str(refused.value).startswith(f"cannot serve on port {port}: another `ormah serve` (pid {os.getpid()}) ")

