"""The self node: make sure exactly one exists, and keep its name."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from memory import runtime
from memory.conf import get_conf
from memory.domain.identity import build_self_node
from memory.domain.node import Node, new_node_id, utcnow
from memory.selectors import node_read, self_row
from memory.services.locking import write_lock
from memory.services.nodes import _persist


def self_ensure(*, name: str | None = None, now: datetime | None = None) -> Node:
    """Return the self node, creating it (person, core) when missing and renaming it when `name` differs."""
    conf = get_conf()
    store = runtime.store(conf)
    now = now or utcnow()
    with write_lock(conf.lock_file):
        row = self_row()
        if row is None:
            node = build_self_node(name=name or conf.self_name, node_id=new_node_id(), now=now)
            _persist(store, node)
            return node
        node, stored = node_read(store=store, row=row)
        if name and name != node.title:
            node = replace(node, title=name, updated=now)
            _persist(store, node, expected=stored)
        return node
