"""A size-rotated log file that several processes write and rotate safely (standard library only: the Django-free
supervisor imports it).

`ormah serve` writes one log from many processes: the supervisor, the gunicorn master and workers, the job
cluster's main, sentinel, monitor, pusher and a fresh job worker after every task; a CLI command may write it with
no server running. logging's RotatingFileHandler judges the size by its own stream and renames the file under the
others, which keep writing into the renamed file and rotate it again: one rollover cascades and the backups (the
restart warnings and stack dumps) are lost.

`SharedRotatingFileHandler` writes each record under an exclusive lock (flock of `<log>.lock`, beside the log): it
reopens when the path no longer names the file it holds (another process rotated), rotates by the path's size,
then appends. So exactly one process rotates each time, and no record goes to a file that is about to be renamed
away or deleted. A record costs a lock, two stats and a write; the tree logs a few records a minute.
"""

from __future__ import annotations

import logging
import os

try:
    import fcntl
except ImportError:  # not POSIX: rotation is then only safe within one process
    fcntl = None


class SharedRotatingFileHandler(logging.FileHandler):
    """RotatingFileHandler's files (`log`, `log.1` newest ... `log.N`), safe when several processes share them."""

    def __init__(self, filename, maxBytes: int = 0, backupCount: int = 0, encoding: str | None = None,
                 delay: bool = False) -> None:
        super().__init__(filename, mode="a", encoding=encoding, delay=True)
        self.maxBytes, self.backupCount = maxBytes, backupCount
        self.lock_path = self.baseFilename + ".lock"
        self._lock_fd: int | None = None
        self._lock_pid = 0
        if not delay:
            self._take()  # fail here, not at the first record, when the folder is not writable

    def emit(self, record: logging.LogRecord) -> None:
        try:
            msg = self.format(record) + self.terminator
            with self._take():
                self._follow()
                if self._full(len(msg)):  # characters for bytes, as RotatingFileHandler counts
                    self._rotate()
                self.stream.write(msg)
                self.stream.flush()
        except RecursionError:
            raise
        except Exception:
            self.handleError(record)

    def close(self) -> None:
        self.acquire()
        try:
            if self._lock_fd is not None and self._lock_pid == os.getpid():
                os.close(self._lock_fd)
            self._lock_fd = None
            super().close()
        finally:
            self.release()

    # ---------------------------------------------------------------------------------------------------------

    def _take(self) -> _Locked:
        """The exclusive lock across processes; a forked child opens its own (flock belongs to the open file, which
        a fork shares with its parent)."""
        if self._lock_fd is None or self._lock_pid != os.getpid():
            if self._lock_fd is not None:
                os.close(self._lock_fd)  # the parent's open file: closing this copy leaves the parent's lock alone
            self._lock_fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
            self._lock_pid = os.getpid()
        return _Locked(self._lock_fd)

    def _follow(self) -> None:
        """Open the path when this handler holds no file, or one the path no longer names (rotated elsewhere)."""
        if self.stream is not None:
            try:
                here, there = os.fstat(self.stream.fileno()), os.stat(self.baseFilename)
                if (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino):
                    return
            except FileNotFoundError:
                pass
            self.stream.close()
            self.stream = None
        self.stream = self._open()

    def _open(self):
        """The log opened for appending, private: it names memories at INFO and holds their text at DEBUG, whatever
        the folder's mode (a home made by an old hook before `ormah init` was 0755). One found readable by others is
        made 0600 again (session 23, review11)."""
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        try:
            if os.fstat(fd).st_mode & 0o077:
                try:
                    os.fchmod(fd, 0o600)
                except PermissionError:  # another user's file in a shared folder: theirs to keep
                    pass
            return os.fdopen(fd, "a", encoding=self.encoding, errors=self.errors)
        except BaseException:
            os.close(fd)
            raise

    def _full(self, incoming: int) -> bool:
        if self.maxBytes <= 0:
            return False
        size = os.fstat(self.stream.fileno()).st_size  # the path's file (_follow), every writer's lines in it
        return size > 0 and size + incoming > self.maxBytes

    def _rotate(self) -> None:
        self.stream.close()
        self.stream = None
        if self.backupCount > 0:
            for index in range(self.backupCount - 1, 0, -1):
                older = f"{self.baseFilename}.{index}"
                if os.path.exists(older):
                    os.replace(older, f"{self.baseFilename}.{index + 1}")
            os.replace(self.baseFilename, self.baseFilename + ".1")
            self.stream = self._open()
        else:
            self.stream = self._open()
            self.stream.truncate(0)  # no backups: start over


class _Locked:
    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __enter__(self) -> _Locked:
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        if fcntl is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
