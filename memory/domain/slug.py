"""Filename slugs: `{type}_{slug}_{short_id}.md`, fixed at a node's first save."""

from __future__ import annotations

import re
import unicodedata

from memory.domain.node import Node

FALLBACK_SLUG = "memory"
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def slugify(text: str, max_length: int = 40) -> str:
    """Lowercase ASCII words joined by hyphens, cut on a hyphen when possible; "memory" when nothing is left."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_ALNUM.sub("-", ascii_text.lower()).strip("-")
    if max_length > 0 and len(slug) > max_length:
        head = slug[:max_length]
        if slug[max_length] != "-" and "-" in head:
            head = head[: head.rfind("-")]
        slug = head.strip("-")
    return slug or FALLBACK_SLUG


def node_filename(node: Node) -> str:
    """The filename a node gets at its first save."""
    slug = slugify(node.title or node.content[:60])
    return f"{node.type.value}_{slug}_{node.short_id}.md"
