"""What the agent's workspace looks like now: git branch and commit (read from .git, no subprocess) and file facts.

Only files inside the agent's workspace are read, after resolving symlinks, so a memory cannot make recall read
(or probe) arbitrary files; files over MAX_HASH_BYTES are not hashed.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from memory.domain.node import Provenance
from memory.domain.trust import FileFact, WorkspaceState, resolve_file

MAX_HASH_BYTES = 64 * 1024 * 1024
_CHUNK = 1 << 20


def _git_dir(root: Path) -> Path | None:
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            target = Path(text.removeprefix("gitdir:").strip())
            return target if target.is_absolute() else (root / target).resolve()
    return None


def _ref_commit(git_dir: Path, ref: str) -> str | None:
    common = git_dir
    common_file = git_dir / "commondir"
    if common_file.is_file():
        common = (git_dir / common_file.read_text().strip()).resolve()
    for base in (git_dir, common):
        loose = base / ref
        if loose.is_file():
            return loose.read_text().strip() or None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8", errors="replace").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref and not line.startswith(("#", "^")):
                return sha
    return None


def git_head(root: Path) -> tuple[str | None, str | None]:
    """(branch, commit) of the repository whose top-level is `root`; (None, None) when it is not one."""
    try:
        git_dir = _git_dir(root)
        if git_dir is None:
            return None, None
        head = (git_dir / "HEAD").read_text(encoding="utf-8", errors="replace").strip()
        if head.startswith("ref:"):
            ref = head.removeprefix("ref:").strip()
            return ref.removeprefix("refs/heads/"), _ref_commit(git_dir, ref)
        return None, head or None  # detached HEAD
    except OSError:
        return None, None


def workspace_state(*, path: str, branch: str | None = None, commit: str | None = None) -> WorkspaceState:
    """The workspace at `path`; branch and commit not given are read from its git repository."""
    root = Path(path)
    if branch is None or commit is None:
        found_branch, found_commit = git_head(root)
        branch = branch if branch is not None else found_branch
        commit = commit if commit is not None else found_commit
    return WorkspaceState(path=os.path.normpath(path), branch=branch, commit=commit)


def _inside(path: Path, roots: list[Path]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def file_fact(provenance: Provenance, workspace: WorkspaceState) -> FileFact | None:
    """The file a memory names, as it is now; None when it names none or it lies outside the allowed roots."""
    target = resolve_file(provenance, workspace)
    if target is None:
        return None
    real = Path(os.path.realpath(target))
    if not _inside(real, [Path(os.path.realpath(workspace.path))]):
        return None
    try:
        if not real.is_file():
            return FileFact(path=target, exists=False)
        if real.stat().st_size > MAX_HASH_BYTES:
            return FileFact(path=target, exists=True)
        digest = hashlib.sha256()
        with real.open("rb") as handle:
            while chunk := handle.read(_CHUNK):
                digest.update(chunk)
        return FileFact(path=target, exists=True, sha256=digest.hexdigest())
    except OSError:
        return FileFact(path=target, exists=True)
