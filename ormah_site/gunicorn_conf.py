"""gunicorn settings for `ormah serve` (`-c python:ormah_site.gunicorn_conf`): the node-folder watcher lives in
a web worker, next to the embedding model it needs, so the supervisor never loads the model (issue 13 item 3)."""

from __future__ import annotations

control_socket_disable = True  # gunicorn's ~/.gunicorn control socket: unused, and it failed on every start


def post_worker_init(worker) -> None:
    """Start the watcher election in this worker (one worker of the server watches; see memory.watcher)."""
    from django.conf import settings

    if not settings.ORMAH["WATCH"]:
        return
    from memory.conf import get_conf
    from memory.services import index_sync
    from memory.watcher import watch_when_elected

    conf = get_conf()
    watch_when_elected(folder=conf.memory_dir / "nodes", lock_file=conf.home / ".watcher.lock", sync=index_sync,
                       sync_changed=lambda paths: index_sync(changed=paths),
                       debounce=settings.ORMAH["WATCH_DEBOUNCE_SECONDS"])
