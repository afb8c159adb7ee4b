"""Atomic exchange of two paths: `renameat2(RENAME_EXCHANGE)` on Linux, `renamex_np(RENAME_SWAP)` on macOS.

After `exchange(a, b)` the file that was at `a` is at `b` and the other way round, in one step that no other
process can interleave with. The guarded node write (memory.files) uses it to swap a new version in and then
look at exactly the file it swapped out. `supported()` is False where the OS (or the file system) has neither
call; the caller then uses its portable fallback (docs/architecture.md, "Hand edits and the guarded write").
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import os
import sys
from functools import cache

AT_FDCWD = -100
RENAME_EXCHANGE = 1 << 1  # linux/fs.h
RENAME_SWAP = 0x00000002  # macOS sys/stdio.h


class ExchangeUnsupported(OSError):
    """The OS or the file system cannot exchange two paths atomically."""


@cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c") or ("libc.so.6" if sys.platform.startswith("linux") else None)
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None


@cache
def _call():
    libc = _libc()
    if libc is None:
        return None
    if sys.platform.startswith("linux") and hasattr(libc, "renameat2"):
        fn = libc.renameat2
        fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda a, b: fn(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
    if sys.platform == "darwin" and hasattr(libc, "renamex_np"):
        fn = libc.renamex_np
        fn.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_uint]
        fn.restype = ctypes.c_int
        return lambda a, b: fn(a, b, RENAME_SWAP)
    return None


def supported() -> bool:
    """Whether this OS offers an atomic exchange call at all (a file system may still refuse it)."""
    return _call() is not None


def exchange(a: os.PathLike | str, b: os.PathLike | str) -> None:
    """Swap the files at `a` and `b` atomically; both must exist.

    Raises ExchangeUnsupported when the OS or file system has no such call (ENOSYS, EINVAL, ENOTSUP), or the
    OSError the call reported (ENOENT when one of them is gone).
    """
    call = _call()
    if call is None:
        raise ExchangeUnsupported(errno.ENOSYS, "atomic exchange is not available on this OS")
    if call(os.fsencode(a), os.fsencode(b)) == 0:
        return
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP):
        raise ExchangeUnsupported(err, os.strerror(err))
    raise OSError(err, os.strerror(err), str(b))
