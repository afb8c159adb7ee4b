"""Project spaces: which project a client works in, judged from its working folder (reference §9).

`space_detect` is pure: the caller passes the configured space, the folder, the home folder and the git
top-level (found with `git_toplevel`, the only function here that touches the file system).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePath

from memory.domain.requests import MAX_SPACE_CHARS

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")


def space_detect(
    *, configured: str | None, cwd: PurePath | None, home: PurePath | None, git_root: PurePath | None = None,
) -> str | None:
    """The space for a client: the configured one, else the git top-level's name, else the folder's name.

    The home folder and the file-system root give no space (None: global), whichever of the two was found.
    """
    if configured and configured.strip():
        return _clean(configured)
    folder = git_root or cwd
    if folder is None:
        return None
    if folder == PurePath(folder.anchor) or (home is not None and folder == home):
        return None
    return _clean(folder.name)


def _clean(name: str) -> str | None:
    """A name that passes the request rules for a space (no slashes or control characters, at most 100)."""
    name = _UNSAFE.sub("-", name.strip())[:MAX_SPACE_CHARS].strip()
    return name if name and name.lower() not in ("null", "none") else None


def git_toplevel(cwd: Path) -> Path | None:
    """The nearest folder at or above `cwd` holding `.git` (a folder, or a file for worktrees), or None."""
    for folder in (cwd, *cwd.parents):
        try:
            if (folder / ".git").exists():
                return folder
        except OSError:  # a name too long or a folder we may not read: no top-level to be found there
            continue
    return None
