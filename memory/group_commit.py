"""Group commit: concurrent writers in one process hand their writes to one holder of the write lock.

A web worker runs several request threads. When each remember takes the write lock for itself, the writes queue
one behind another and every hold pays its own fixed costs (the lock, the evidence fsync, the folder fsync, the
index transaction), each stretched by the other threads' CPU. Here the first caller becomes the leader: it waits
for the lock while later callers queue behind it, then takes everything queued and runs it in one call of
`run` (one unit of work: one hold, one fsync of each folder, one transaction). Callers that arrive during the hold
form the next group, led by one of them. Each caller returns only when its own write is committed (or raises what
its write raised), so nothing is acknowledged before it is durable. `run` gets the payloads in arrival order and
returns one outcome per payload, a result or the exception to raise in that caller.

Only threads of one process group; processes still serialise on the write lock. A caller already holding the
lock (inside a unit) runs its write alone, as before.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from memory.writes import exclusive, lock_held

P = TypeVar("P")
R = TypeVar("R")

_PENDING = object()


class _Ticket(Generic[P]):
    __slots__ = ("payload", "outcome")

    def __init__(self, payload: P) -> None:
        self.payload = payload
        self.outcome: object = _PENDING

    def result(self):
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


class GroupCommit(Generic[P, R]):
    """Run concurrent callers' payloads in groups, one group per hold of the write lock (module docstring)."""

    def __init__(self, run: Callable[[Sequence[P]], list[R | BaseException]]) -> None:
        self._run = run
        self._cv = threading.Condition()
        self._queue: list[_Ticket[P]] = []
        self._leading = False
        self.sizes: Counter[int] = Counter()  # how many groups of each size ran (benches report it)

    def waiting(self) -> int:
        """Callers queued for the next group (the leader waiting for the lock counts as one)."""
        with self._cv:
            return len(self._queue)

    def submit(self, payload: P) -> R:
        """Write `payload` with whatever else is queued; returns its result once committed, or raises its error."""
        if lock_held():
            return _single(self._run, payload)
        ticket = _Ticket(payload)
        with self._cv:
            self._queue.append(ticket)
            while self._leading and ticket.outcome is _PENDING:
                self._cv.wait()
            if ticket.outcome is not _PENDING:
                return ticket.result()
            self._leading = True
        group: list[_Ticket[P]] = []
        try:
            with exclusive():
                with self._cv:  # everything that queued while this leader waited for the lock
                    group, self._queue = self._queue, []
                self.sizes[len(group)] += 1
                outcomes = self._run([t.payload for t in group])
                for t, outcome in zip(group, outcomes, strict=True):
                    t.outcome = outcome
        except BaseException as exc:  # Trigger: the lock cannot be taken, or `run` itself failed. Why: every caller of the group must learn it, none may wait forever. Outcome: each unanswered caller raises it.
            with self._cv:
                if not group and ticket in self._queue:  # failed before taking the group: only this caller
                    self._queue.remove(ticket)
                    group = [ticket]
            for t in group:
                if t.outcome is _PENDING:
                    t.outcome = exc
        finally:
            with self._cv:
                self._leading = False
                self._cv.notify_all()
        return ticket.result()


def _single(run: Callable[[Sequence[P]], list[R | BaseException]], payload: P) -> R:
    outcome = run([payload])[0]
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome
