"""A full disk and a read-only home, made for real where the kernel lets us, with fallbacks where it does not.

- Full disk: a small tmpfs mounted on the folder and filled to ENOSPC. Fallback (no mount, or
  ORMAH_FAULTS_NO_MOUNT=1): RLIMIT_FSIZE 0 with SIGXFSZ ignored, so every write to a file fails with EFBIG.
- Read-only: the folder bind-mounted onto itself and remounted read-only (root ignores chmod). Fallback for a
  non-root user: chmod a-w. Root without mount rights has no honest way to freeze a folder: the test is skipped
  with a warning that says so, never silently.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import signal
import stat
import subprocess
import tempfile
import warnings
from pathlib import Path

import pytest

NO_MOUNT = os.environ.get("ORMAH_FAULTS_NO_MOUNT") == "1"


def _run(*args: str) -> bool:
    return subprocess.run(list(args), capture_output=True).returncode == 0


@contextlib.contextmanager
def _mounted(*args: str, target: Path):
    if not _run("mount", *args, str(target)):
        raise OSError(f"mount {' '.join(args)} {target} failed")
    try:
        yield
    finally:
        if not _run("umount", str(target)):
            _run("umount", "-l", str(target))


def can_mount() -> bool:
    """True when this process may mount a tmpfs (root, or CAP_SYS_ADMIN), unless told not to."""
    if NO_MOUNT:
        return False
    with tempfile.TemporaryDirectory() as probe:
        if not _run("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe):
            return False
        _run("umount", probe)
        return True


# ---------------------------------------------------------------------------
# Full disk
# ---------------------------------------------------------------------------

class FullDisk:
    """A folder on a disk that can be filled (tmpfs) or, as a fallback, a process file-size limit of 0."""

    def __init__(self, folder: Path, *, size_kib: int = 1024) -> None:
        self.folder = folder
        self.size_kib = size_kib
        self.mode = "tmpfs" if can_mount() else "rlimit"
        self.filler = folder / ".filler"
        self._stack = contextlib.ExitStack()

    def __enter__(self) -> FullDisk:
        self.folder.mkdir(parents=True, exist_ok=True)
        if self.mode == "tmpfs":
            keep = _snapshot_files(self.folder)
            self._stack.enter_context(_mounted("-t", "tmpfs", "-o", f"size={self.size_kib}k,mode=0700", "tmpfs",
                                               target=self.folder))
            _restore_files(self.folder, keep)
        return self

    def __exit__(self, *exc) -> None:
        self._stack.close()

    @contextlib.contextmanager
    def full(self):
        """The disk is full (or, as a fallback, no file may grow) inside this block; space returns after it."""
        if self.mode == "tmpfs":
            fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                with contextlib.suppress(OSError):
                    while True:
                        os.write(fd, b"\0" * 4096)
            finally:
                os.close(fd)
            try:
                yield
            finally:
                self.filler.unlink()
            return
        old_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
        old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (0, old_limit[1]))
        try:
            yield
        finally:
            resource.setrlimit(resource.RLIMIT_FSIZE, old_limit)
            signal.signal(signal.SIGXFSZ, old_handler)

    def preexec(self):
        """A preexec_fn putting a child process under the fallback limit (None with a real full disk)."""
        if self.mode == "tmpfs":
            return None

        def limit() -> None:
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

        return limit

    @property
    def reason(self) -> str:
        """What the storage error says in this mode."""
        return "disk full" if self.mode == "tmpfs" else os.strerror(errno.EFBIG)


def _snapshot_files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def _restore_files(folder: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        path.write_bytes(data)


# ---------------------------------------------------------------------------
# Read-only
# ---------------------------------------------------------------------------

@contextlib.contextmanager
def read_only(folder: Path):
    """The folder (and everything under it) cannot be written inside this block."""
    if can_mount():
        with _mounted("--bind", str(folder), target=folder):
            if not _run("mount", "-o", "remount,bind,ro", str(folder)):
                raise OSError(f"cannot remount {folder} read-only")
            yield "bind-ro"
        return
    if os.geteuid() == 0:
        message = ("read-only home: running as root without mount rights; root ignores file modes, so there is "
                   "no honest read-only folder here. Run the fault suite as a normal user or with CAP_SYS_ADMIN.")
        warnings.warn(message, stacklevel=2)
        pytest.skip(message)
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.rglob("*")]}
    for path, mode in modes.items():
        path.chmod(mode & ~0o222)
    try:
        yield "chmod"
    finally:
        for path, mode in sorted(modes.items(), key=lambda kv: len(kv[0].parts)):
            path.chmod(mode)


@contextlib.contextmanager
def fast_folder(folder: Path, *, size_mib: int = 256):
    """A tmpfs on the folder when allowed (bulk seeding skips the disk's fsync cost), else the folder as it is.

    Crash tests lose nothing by this: SIGKILL leaves the page cache to the kernel either way; only power loss would
    tell a tmpfs from a disk, and no test here cuts the power.
    """
    folder.mkdir(parents=True, exist_ok=True)
    if not can_mount():
        yield folder
        return
    with _mounted("-t", "tmpfs", "-o", f"size={size_mib}m,mode=0700", "tmpfs", target=folder):
        yield folder
