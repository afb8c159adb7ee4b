"""Manual edits are live: one watchdog observer on the node folder feeds the incremental sync.

Events are debounced and the sync is handed the files they named: when each is already indexed as it is (the
app's own writes), nothing is scanned and the write lock is not taken. A periodic sweep catches anything the OS
did not report.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path

from watchdog.events import (
    FileClosedEvent, FileCreatedEvent, FileDeletedEvent, FileModifiedEvent, FileMovedEvent, FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer

logger = logging.getLogger(__name__)


# Events that change a folder or a file. Opening and closing without writing are not changes: the sync itself
# opens files, and reacting to that made the watcher re-sync forever while a malformed file existed.
CHANGES = frozenset({"created", "modified", "deleted", "moved", "closed"})
# The file events those are, asked of the OS (the inotify mask): opens, reads' closes and the folder's own events are
# never delivered, where watchdog built, queued and dispatched each only for the handler to drop it (six events a
# remember reached the handler, one a node file's open; every read of a node file by another process added two).
EVENT_FILTER = [FileCreatedEvent, FileModifiedEvent, FileDeletedEvent, FileMovedEvent, FileClosedEvent]


class _Handler(FileSystemEventHandler):
    def __init__(self, wake: threading.Event, changed: set[Path], lock: threading.Lock) -> None:
        self._wake, self._changed, self._lock = wake, changed, lock

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in CHANGES:
            return
        paths = [p for p in (str(event.src_path), str(getattr(event, "dest_path", "") or "")) if p.endswith(".md")]
        if paths:
            with self._lock:
                self._changed.update(map(Path, paths))
            self._wake.set()


class NodeFolderWatcher:
    """Runs `sync` after changes under `folder` settle for `debounce` seconds, and every `sweep` seconds.

    `sync_changed`, when given, runs instead after events, with the set of files they named.
    """

    def __init__(self, folder: Path, sync: Callable[[], object], *, debounce: float = 0.3, sweep: float = 60.0,
                 sync_changed: Callable[[set[Path]], object] | None = None):
        self.folder, self._sync, self._debounce, self._sweep = Path(folder), sync, debounce, sweep
        self._sync_changed = sync_changed
        self._changed: set[Path] = set()
        self._changed_lock = threading.Lock()
        self._wake, self._stop = threading.Event(), threading.Event()
        self._observer = Observer()
        self._thread = threading.Thread(target=self._loop, name="ormah-watcher", daemon=True)

    def start(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        self._watch = self._observer.schedule(_Handler(self._wake, self._changed, self._changed_lock),
                                              str(self.folder), recursive=False, event_filter=EVENT_FILTER)
        self._observer.start()
        self._thread.start()
        logger.info("Watching %s for manual edits", self.folder)

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._thread.join(timeout=10)

    def _loop(self) -> None:
        last_full = time.monotonic()
        while not self._stop.is_set():
            self._wake.wait(timeout=self._sweep)
            if self._stop.is_set():
                return
            while self._wake.is_set():  # let a burst of events settle
                self._wake.clear()
                if self._stop.wait(self._debounce):
                    return
            with self._changed_lock:
                changed = set(self._changed)
                self._changed.clear()
            # A full sweep at least every `sweep` seconds, even while the app's own writes keep the events coming:
            # it catches what the OS never reported (network folders, an overflowed event queue).
            full = not changed or self._sync_changed is None or time.monotonic() - last_full >= self._sweep
            try:
                if full:
                    self._sync()
                    last_full = time.monotonic()
                else:
                    self._sync_changed(changed)
            except Exception:  # Trigger: any sync failure. Why: the watcher must outlive one bad pass. Outcome: logged; the paths are kept for the next pass.
                logger.exception("Incremental sync after a file change failed")
                with self._changed_lock:
                    self._changed |= changed


def watch_when_elected(*, folder: Path, lock_file: Path, sync: Callable[[], object], debounce: float,
                       retry: float = 5.0, sync_changed: Callable[[set[Path]], object] | None = None,
                       ) -> threading.Thread:
    """Run one watcher per home among several processes: whichever holds `lock_file` watches.

    A daemon thread tries the lock every `retry` seconds; the holder first runs `sync` (catching up on edits made
    while no one watched, and loading the model where it is used anyway), then watches `folder` for the life of
    the process. When the holder dies, the kernel drops its lock and another process takes over.
    """
    def elect() -> None:
        fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o600)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                threading.Event().wait(retry)
        try:
            sync()
        except Exception:  # Trigger: the catch-up sync failed. Why: watching must still start. Outcome: logged.
            logger.exception("The catch-up sync before watching failed")
        NodeFolderWatcher(folder, sync, debounce=debounce, sync_changed=sync_changed).start()

    thread = threading.Thread(target=elect, name="ormah-watcher-election", daemon=True)
    thread.start()
    return thread
