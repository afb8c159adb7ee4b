"""Nameless files (Linux `O_TMPFILE`): written and fsynced before they have a name, then linked under one.

Path-level, like the primitives of memory.atomic: the batch write of new node files (memory.files_new.write_new_nodes)
writes its files here, several at once so the file system commits the waiting fsyncs together, and only then
names them, never over a file. A kill before the link leaves no file at all. Used by memory.files only (an
import-linter contract). No Django.
"""

from __future__ import annotations

import ctypes
import errno
import os
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from memory.atomic import storage_error

_THREADS = 8  # fsyncs waiting together: the file system commits them in a few journal commits, not one each
_AT_FDCWD, _AT_SYMLINK_FOLLOW = -100, 0x400
try:  # Linux: nameless files (O_TMPFILE) and linkat through /proc; elsewhere available() is False
    _linkat = ctypes.CDLL(None, use_errno=True).linkat if hasattr(os, "O_TMPFILE") else None
except (OSError, AttributeError):
    _linkat = None


def available() -> bool:
    """Whether this platform has nameless files and `linkat` (the file system may still refuse: see `write_all`)."""
    return _linkat is not None


def write_all(root: Path, folder: Path, datas: list[bytes]) -> list[tuple[int, os.stat_result]] | None:
    """Each of `datas` in a nameless, fsynced file of `folder` (open descriptors the caller closes, with their stat).

    `root` and then `folder` are made (private) first. None, writing nothing, when the file system has no
    O_TMPFILE. Raises StorageError (every descriptor closed: nothing is left behind).
    """
    try:
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise storage_error(exc, folder) from exc

    def write(data: bytes) -> tuple[int, os.stat_result]:
        fd = os.open(folder, os.O_TMPFILE | os.O_WRONLY | os.O_CLOEXEC, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
            return fd, os.fstat(fd)
        except BaseException:
            os.close(fd)
            raise

    try:
        first = write(datas[0])
    except OSError as exc:
        if exc.errno in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT):
            return None
        raise storage_error(exc, folder) from exc
    opened = [first]
    try:
        with ThreadPoolExecutor(max_workers=min(_THREADS, max(len(datas) - 1, 1))) as pool:
            futures = [pool.submit(write, data) for data in datas[1:]]
            failure = None
            for future in futures:
                try:
                    opened.append(future.result())
                except OSError as exc:
                    failure = failure or exc
            if failure is not None:
                raise storage_error(failure, folder) from failure
    except BaseException:
        for fd, _ in opened:
            os.close(fd)
        raise
    return opened


def link(fd: int, target: Path) -> int:
    """Give the nameless file `fd` the name `target`, never over a file: 0, or the errno (EEXIST: the name is
    taken; anything else: no /proc, or the disk refuses)."""
    if _linkat(_AT_FDCWD, f"/proc/self/fd/{fd}".encode(), _AT_FDCWD, os.fsencode(target), _AT_SYMLINK_FOLLOW):
        return ctypes.get_errno()
    return 0
