"""Reads about malformed node files: the answer a read by id gives when a file does not parse, and the list of them.

The files are left untouched: a malformed file is named, with what to do, never fixed or removed here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from memory.conf import get_conf
from memory.errors import MalformedNodeFile, NodeNotFound, OrmahError
from memory.store import MarkdownStore

__all__ = ["malformed_files", "malformed_self", "node_read_error"]

_NAMED_TAIL = re.compile(r"_[0-9a-f]{8}\.md\Z")  # the `_<short id>.md` every file name ends with
SELF_MARK = b"system:self"  # the self node's `source` (memory.domain.identity): how a file says it is the self node


def node_read_error(*, store: MarkdownStore, ref: str, error: OrmahError) -> OrmahError:
    """The error a read by id answers when `error` stopped it: a malformed file for `ref` as a MalformedNodeFile that
    names the file relative to the home and what to do, never a plain "No memory with id" (a sync drops the row of
    a file that stopped parsing, and the file is left untouched); any other error as it is.

    Once the row is gone the file is found by its name (`..._<first 8 hex of the id>.md`, docs/file-format.md), so a
    malformed file renamed by hand is not found and the answer stays NodeNotFound.
    """
    if isinstance(error, MalformedNodeFile):
        return _malformed_answer(store, ref, Path(error.path), error.reason)
    if type(error) is not NodeNotFound:  # NodeMerged names the keeper: that is the answer
        return error
    ref = (ref or "").strip().lower()
    short = ref.replace("-", "")[:8] if len(ref) >= 8 else ref
    for path in sorted(store.nodes_dir.glob(f"*_{short}*.md")):
        if not _NAMED_TAIL.search(path.name) or not path.name[-11:-3].startswith(short):
            continue
        try:
            store.read(path)
        except MalformedNodeFile as exc:
            return _malformed_answer(store, ref, path, exc.reason)
        except (OSError, OrmahError):
            continue
    return error


def _malformed_answer(store: MarkdownStore, ref: str, path: Path, reason: str) -> MalformedNodeFile:
    home = get_conf().home
    shown = path.relative_to(home) if path.is_relative_to(home) else path
    return MalformedNodeFile(
        f"The file of memory {ref} is malformed and left untouched: {shown}: {reason}. Fix it in an editor and the "
        "next sync indexes it again; `ormah doctor` lists it under malformed_files",
        path=shown, reason=reason)


def malformed_files(*, store: MarkdownStore) -> list[dict]:
    """Node files that cannot be parsed, with the reason (they are left untouched)."""
    return [{"path": os.path.relpath(item.path, store.root), "reason": item.error}
            for item in store.scan() if item.error]


def malformed_self(*, store: MarkdownStore) -> MalformedNodeFile | None:
    """The error to answer when the self node's file is there but does not parse (a node file saying `system:self`),
    or None. Ask only when the index holds no self node: this reads every node file."""
    for path in store.iter_paths():
        try:
            if path.is_symlink() or SELF_MARK not in path.read_bytes():
                continue
            store.read(path)
        except MalformedNodeFile as exc:
            home = get_conf().home
            shown = path.relative_to(home) if path.is_relative_to(home) else path
            return MalformedNodeFile(
                f"The self node's file is malformed and left untouched: {shown}: {exc.reason}. Fix it in an editor "
                "and the next sync indexes it again (no second self node is made meanwhile)", path=shown,
                reason=exc.reason)
        except OSError:
            continue
    return None
