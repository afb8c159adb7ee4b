"""Claims: every part of `ormah serve` runs numpy and the embedding model with one thread per call unless the user
set otherwise, keeps glibc to one heap arena, `--no-watch` turns the watcher off (docs/benchmarks.md, "Soak"), and
gunicorn preloads the application in its master only when it forks more than one worker ("Serve tree RSS"), two
workers of four threads by default, and the job cluster runs niced (docs/team-server.md, "Sizing")."""

from __future__ import annotations

import pytest

from ormah_site.management.commands.serve import serve_environment, serve_parts


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
