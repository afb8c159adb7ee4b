"""Claims: every part of `ormah serve` runs numpy and the embedding model with one thread per call unless the user
set otherwise, keeps glibc to one heap arena, `--no-watch` turns the watcher off (docs/benchmarks.md, "Soak"), and
gunicorn preloads the application in its master only when it forks more than one worker ("Serve tree RSS"), two
workers of four threads by default, and the job cluster runs niced (docs/team-server.md, "Sizing")."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ormah_site.management.commands.serve import serve_environment, serve_parts
from tests.support.ports import free_port, listening, wait_until

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(("key", "value"), [
    ("OPENBLAS_NUM_THREADS", "1"),
    ("ORMAH_EMBEDDING_THREADS", "1"),
    ("MALLOC_ARENA_MAX", "1"),
    ("DJANGO_SETTINGS_MODULE", "ormah_site.settings"),
])
def test_the_served_tree_gets_the_default(key, value):
    assert serve_environment({"PATH": "/usr/bin"})[key] == value


@pytest.mark.parametrize("key", ["OPENBLAS_NUM_THREADS", "ORMAH_EMBEDDING_THREADS", "MALLOC_ARENA_MAX"])
def test_a_value_the_user_set_is_kept(key):
    assert serve_environment({key: "4"})[key] == "4"


def test_the_callers_environment_is_passed_on():
    assert serve_environment({"ORMAH_HOME": "/srv/ormah"})["ORMAH_HOME"] == "/srv/ormah"


def test_no_watch_turns_the_watcher_off():
    assert serve_environment({"ORMAH_WATCH": "1"}, watch=False)["ORMAH_WATCH"] == "0"


def test_the_watcher_setting_is_left_alone_by_default():
    assert "ORMAH_WATCH" not in serve_environment({})


@pytest.mark.parametrize(("workers", "preload"), [(1, False), (2, True)])
def test_the_web_master_preloads_only_for_more_than_one_worker(settings, workers, preload):
    settings.ORMAH = {**settings.ORMAH, "WEB_WORKERS": workers}
    web = serve_parts(host="127.0.0.1", port=8787, cluster=False)[0].argv
    assert ("--preload" in web) is preload


@pytest.mark.parametrize(("workers", "timeout"), [(1, "120"), (2, "30"), (4, "30")])
def test_a_worker_per_socket_is_replaced_after_30_s_without_its_main_loop(settings, workers, timeout):
    settings.ORMAH = {**settings.ORMAH, "WEB_WORKERS": workers}
    web = serve_parts(host="127.0.0.1", port=8787, cluster=False)[0].argv
    assert web[web.index("--timeout") + 1] == timeout


def test_the_default_layout_is_two_preloaded_workers_of_four_threads():
    web = serve_parts(host="127.0.0.1", port=8787, cluster=False)[0].argv
    assert (web[web.index("--workers") + 1], web[web.index("--threads") + 1], "--preload" in web) == ("2", "4", True)


def test_the_job_cluster_starts_at_nice_10_and_the_web_at_the_callers_priority():
    web, jobs = serve_parts(host="127.0.0.1", port=8787)
    assert (web.nice, jobs.nice) == (0, 10)


@pytest.mark.parametrize(("workers", "sockets", "worker"), [
    (2, "shared", "ormah_site.gunicorn_workers.FreeThreadWorker"),
    (2, "per-worker", "ormah_site.gunicorn_workers.HeadDeadlineWorker"),  # a busy worker that stopped accepting
    (1, "shared", "ormah_site.gunicorn_workers.HeadDeadlineWorker"),  # would strand its own socket's queue
])
def test_only_workers_on_a_shared_socket_take_connections_only_with_a_thread_free(settings, workers, sockets, worker):
    settings.ORMAH = {**settings.ORMAH, "WEB_WORKERS": workers, "WEB_SOCKETS": sockets}
    web = serve_parts(host="127.0.0.1", port=8787, cluster=False)[0].argv
    assert web[web.index("--worker-class") + 1] == worker


def test_two_workers_share_one_socket_by_default():
    web = serve_parts(host="127.0.0.1", port=8787, cluster=False)[0].argv
    assert web[web.index("--worker-class") + 1] == "ormah_site.gunicorn_workers.FreeThreadWorker"


def test_a_relative_path_reaches_the_parts_as_this_process_reads_it(tmp_path, monkeypatch):
    """The parts run in the code's folder: ORMAH_HOME=./h must not name another home there (review14, session 25:
    the web workers served an empty home, 500 on every request)."""
    monkeypatch.chdir(tmp_path)
    env = serve_environment({"ORMAH_HOME": "./h", "ORMAH_LOG_DIR": "logs", "ORMAH_DB_PATH": "~/x.db",
                             "ORMAH_PORT": "1"})
    assert (env["ORMAH_HOME"], env["ORMAH_LOG_DIR"]) == (str(tmp_path / "h"), str(tmp_path / "logs"))
    assert env["ORMAH_DB_PATH"] == str(Path("~/x.db").expanduser().resolve()) and env["ORMAH_PORT"] == "1"


@pytest.mark.slow
def test_serve_from_a_folder_that_shadows_the_standard_library_with_a_relative_home(tmp_path):
    """A real `ormah serve` started in a project's folder holding a json.py, with ORMAH_HOME relative to it: the
    supervisor imported the project's json.py and died (it ran `python -m` in the caller's folder), and the parts
    read the relative home against the code's folder. The CLI runs as the installed `ormah` script does: no current
    folder on sys.path (-P), this tree on PYTHONPATH."""
    project = tmp_path / "project"
    project.mkdir()
    (project / "json.py").write_text("raise ImportError('the project json.py, not the standard library')\n")
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("ORMAH_") and k != "DJANGO_SETTINGS_MODULE"},
           "ORMAH_HOME": "./home", "ORMAH_PORT": str(port), "PYTHONPATH": str(ROOT), "ORMAH_LOG_LEVEL": "WARNING"}
    cli = [sys.executable, "-P", "-m", "ormah_site.cli"]
    subprocess.run([*cli, "init", "--quiet"], cwd=project, env=env, check=True, timeout=300)
    proc = subprocess.Popen([*cli, "serve", "--no-cluster", "--no-watch"], cwd=project, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_until(lambda: listening(port) or proc.poll() is not None, 120, 0.2)
        assert proc.poll() is None, proc.stderr.read()[-2000:]
        found = subprocess.run([*cli, "recall", "anything"], cwd=project, env=env, capture_output=True, text=True,
                               timeout=120)
        assert found.returncode == 0, found.stdout + found.stderr  # the home `ormah init` made, not an empty one
        assert not (ROOT / "home").exists()
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=60)
