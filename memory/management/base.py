"""Shared plumbing for the memory CLI commands: clear errors, a progress bar, node rendering."""

from __future__ import annotations

import sys
from datetime import UTC, datetime

from django.core.management.base import BaseCommand, CommandError
from pydantic import ValidationError

from memory.domain.node import Node
from memory.domain.requests import auto_title, validation_message
from memory.errors import OrmahError


class OrmahCommand(BaseCommand):
    """A command whose domain errors become a one-line message and exit status 1."""

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except OrmahError as exc:
            details = f" ({exc.details})" if exc.details else ""
            raise CommandError(f"{exc.message}{details}") from exc
        except ValidationError as exc:
            raise CommandError(f"Invalid input: {validation_message(exc)}") from exc


def progress_bar(stream=None):
    """A progress callback that draws `[#####.....] done/total` on stderr."""
    stream = stream or sys.stderr

    def draw(done: int, total: int) -> None:
        if not total or not stream.isatty() and done != total:
            return
        width = 30
        filled = int(width * done / total)
        stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done == total:
            stream.write("\n")
        stream.flush()

    return draw


def utc_label(at: datetime) -> str:
    """A time for people in the terminal: UTC, labelled so ("2026-11-29 13:20 UTC"); a naive time is UTC."""
    return f"{(at.astimezone(UTC) if at.tzinfo else at):%Y-%m-%d %H:%M} UTC"


def node_text(node: Node) -> str:
    """A compact human rendering of a node for the terminal."""
    lines = [f"[{node.type}] {node.title or auto_title(node.content)}",
             f"ID: {node.id} | Tier: {node.tier} | Space: {node.space or 'global'} | Created: {utc_label(node.created)}"]
    if node.tags:
        lines.append("Tags: " + ", ".join(node.tags))
    if node.valid_until:
        lines.append(f"Outdated since {utc_label(node.valid_until)}")
    lines += ["", node.content]
    if node.connections:
        lines += ["", "Connections:"]
        lines += [f"  -> {c.edge} ({c.weight:.2f}) {c.target}" + (f"  {c.reason}" if c.reason else "")
                  for c in node.connections]
    return "\n".join(lines)
