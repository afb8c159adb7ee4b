"""The read-only guard: tooling never edits a read-only core block automatically (docs/trust.md).

Automated callers (maintenance jobs, the maintenance agent protocol, the core cap) run their writes inside
`automated_writes()`, or pass `automated=True` to a service; every memory service that rewrites an existing
memory calls `guard_write` first, which raises ProtectedNode for a read-only block while automation is on.
People (the UI, the CLI, an agent's explicit API call) may still edit a read-only block.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from memory.domain.node import Node
from memory.errors import ProtectedNode

_AUTOMATED: ContextVar[str | None] = ContextVar("ormah_automated_writes", default=None)


@contextmanager
def automated_writes(actor: str = "maintenance") -> Iterator[None]:
    """Mark the writes made inside the block as automated (`actor` names the tool in errors)."""
    token = _AUTOMATED.set(actor)
    try:
        yield
    finally:
        _AUTOMATED.reset(token)


def automation_actor(automated: bool = False) -> str | None:
    """The automated tool writing now (`automated=True` counts as "automation"), or None for a person."""
    return _AUTOMATED.get() or ("automation" if automated else None)


def guard_write(node: Node, *, automated: bool = False) -> None:
    """Refuse an automated write to a read-only memory; raises ProtectedNode."""
    actor = automation_actor(automated)
    if actor is not None and node.read_only:
        raise ProtectedNode(f"{node.short_id} is a read-only core block; {actor} may not change it",
                            details={"node_id": node.id, "actor": actor})
