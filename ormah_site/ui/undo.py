"""Undo for every UI action that changes memories: a short stack of undo steps kept in the person's session.

An action records what undoing it takes, as steps applied in order through the apps' services:

- ``revert``: put a memory's file back to its text before the action, while the file still has the hash the
  action left (memory.services.revert.node_revert refuses otherwise, so a later edit is never lost);
- ``merge_undo``: memory.services.merge_undo (refused, changing nothing, when the kept memory changed since the
  merge; the step's proposal, if named, then stays decided: its reopen step is skipped);
  ``restore``: bring a forgotten memory back;
- ``forget``: remove a memory the action created (a consolidation's result);
- ``reopen``: put a decided proposal back in the queue (maintenance.services.review.proposal_reopen).

The stack is per session (the UI has one person) and bounded; snapshots are at most a memory's size.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from django.http import HttpRequest

from maintenance.services.review import proposal_reopen
from memory import runtime
from memory.errors import NodeNotFound, OrmahError
from memory.selectors import node_snapshot
from memory.services import merge_undo, node_forget, node_restore
from memory.services.revert import node_revert

SESSION_KEY = "ormah_undo"
STACK_SIZE = 20


@dataclass
class Recorder:
    """Snapshots of the memories an action may change, taken before it; `steps()` after it says how to undo it."""

    before: dict[str, tuple[str, str]] = field(default_factory=dict)  # uid -> (text, hash)

    def watch(self, uids: list[str]) -> Recorder:
        store = runtime.store()
        for uid in uids:
            if uid in self.before:
                continue
            try:
                snap = node_snapshot(store=store, ref=uid)
            except OrmahError:
                continue  # gone already: the action will fail on it and record nothing for it
            self.before[snap.uid] = (snap.text, snap.hash)
        return self

    def steps(self) -> list[dict]:
        """A revert step for every watched memory whose file the action changed (still live)."""
        store = runtime.store()
        out = []
        for uid, (text, old_hash) in self.before.items():
            try:
                now_hash = node_snapshot(store=store, ref=uid).hash
            except NodeNotFound:
                continue
            if now_hash != old_hash:
                out.append({"op": "revert", "uid": uid, "text": text, "hash": now_hash})
        return out


def push(request: HttpRequest, *, label: str, steps: list[dict], ids: list[str] | None = None) -> str | None:
    """Remember how to undo an action; returns the entry's token (None when there is nothing to undo)."""
    if not steps:
        return None
    token = uuid.uuid4().hex[:12]
    stack = list(request.session.get(SESSION_KEY, []))
    stack.append({"token": token, "label": label, "steps": steps, "ids": ids or []})
    request.session[SESSION_KEY] = stack[-STACK_SIZE:]
    return token


def latest(request: HttpRequest) -> dict | None:
    """The newest entry (what `u` undoes), or None."""
    stack = request.session.get(SESSION_KEY, [])
    return stack[-1] if stack else None


@dataclass(frozen=True)
class UndoOutcome:
    label: str
    errors: list[str]
    changed: list[str]
    removed: list[str]
    reopened: list[str]

    @property
    def ok(self) -> bool:
        return not self.errors

    @property
    def nothing_done(self) -> bool:
        """Every step was refused: no memory and no proposal changed."""
        return bool(self.errors) and not (self.changed or self.removed or self.reopened)


def _apply(step: dict, out: UndoOutcome) -> None:
    op = step["op"]
    if op == "revert":
        node_revert(node_id=step["uid"], text=step["text"], expected_hash=step["hash"])
        out.changed.append(step["uid"])
    elif op == "merge_undo":
        row = merge_undo(ref=step["merge_id"])
        out.changed.extend([row.kept_uid, row.removed_uid])
    elif op == "restore":
        out.changed.append(node_restore(node_id=step["uid"]).id)
    elif op == "forget":
        out.removed.append(node_forget(ref=step["uid"]).id)
    elif op == "reopen":
        proposal_reopen(proposal_id=step["proposal_id"])
        out.reopened.append(step["proposal_id"])


def undo(request: HttpRequest, *, entry_id: str | None = None) -> UndoOutcome | None:
    """Undo the entry whose token is `entry_id` (default: the newest) and drop it; None when there is none.

    The token is an opaque handle into this session's own stack, not a secret (the session is the secret).

    Every step is tried; the ones that fail are reported (a memory changed again since, a merge already undone).
    """
    stack = list(request.session.get(SESSION_KEY, []))
    index = next((i for i in range(len(stack) - 1, -1, -1) if entry_id is None or stack[i]["token"] == entry_id), None)
    if index is None:
        return None
    entry = stack.pop(index)
    request.session[SESSION_KEY] = stack
    out = UndoOutcome(label=entry["label"], errors=[], changed=[], removed=[], reopened=[])
    kept_decided = set()  # proposals whose merge was not undone: reopening them would leave the merge applied
    for step in entry["steps"]:
        if step["op"] == "reopen" and step["proposal_id"] in kept_decided:
            continue
        try:
            _apply(step, out)
        except OrmahError as exc:
            out.errors.append(exc.message)
            if step["op"] == "merge_undo" and step.get("proposal_id"):
                kept_decided.add(step["proposal_id"])
    return out
