"""The one error hierarchy of Ormah.

Every error carries a stable machine `code` and the HTTP status the API maps it to; the mapping to responses
happens in exactly one place (the API layer). Services raise these; they never return error strings.
"""

from __future__ import annotations

import os
from typing import Any


class OrmahError(Exception):
    """Base of every error Ormah raises on purpose."""

    code = "ormah_error"
    http_status = 500

    def __init__(self, message: str, *, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def __str__(self) -> str:
        return self.message


class ValidationFailed(OrmahError):
    """Input broke a rule (blank content, unknown type, bad weight, ...)."""

    code = "validation_failed"
    http_status = 422


class NodeNotFound(OrmahError):
    """No memory with that id (or its file is gone)."""

    code = "not_found"
    http_status = 404


class NodeForgotten(NodeNotFound):
    """The id names a memory that was forgotten (its file is in deleted/) and can be restored; details:
    {"forgotten": its full id}. A 404 like NodeNotFound with the same code; the message says how to restore it, so
    the API, MCP, the CLI and the web UI say the same thing."""


class NodeMerged(NodeNotFound):
    """The id names a memory a duplicate merge removed; `details` names where it went.

    details: {"merged_into": the live keeper (merges followed in a chain) or the last keeper when that one is gone
    too, "merged_at", "merge_id", "chain": every keeper in order, "keeper_live"}. A 404 like NodeNotFound with the
    same code, so clients that know only "not_found" keep working. Reads and edits get it; writes about the
    content (whisper feedback) follow it to the keeper (memory.selectors.node_row_resolve).
    """

    @property
    def merged_into(self) -> str:
        """The keeper's id."""
        return self.details["merged_into"]


class SessionStateNotFound(OrmahError):
    """No state was ever recorded for that session."""

    code = "not_found"
    http_status = 404


class AmbiguousNodeRef(OrmahError):
    """An id prefix matches more than one memory; `details` lists the candidate ids."""

    code = "ambiguous_ref"
    http_status = 409

    @property
    def candidates(self) -> list[str]:
        """The candidate ids (the `details` list)."""
        return list(self.details or [])


class Conflict(OrmahError):
    """The request clashes with the current state."""

    code = "conflict"
    http_status = 409


class WriteConflict(Conflict):
    """The file changed on disk since it was read; the app's version went to `details["conflict_path"]`."""

    code = "write_conflict"


class ProtectedNode(OrmahError):
    """The operation is not allowed on this memory (the self node, for example)."""

    code = "protected_node"
    http_status = 409


class PayloadTooLarge(OrmahError):
    """Content or request over the size limit."""

    code = "payload_too_large"
    http_status = 413


class MalformedNodeFile(OrmahError):
    """A markdown node file that cannot be parsed; `path` says which, `reason` says why."""

    code = "malformed_file"
    http_status = 422

    def __init__(
        self, message: str | None = None, *, path: str | os.PathLike[str], reason: str, details: Any = None,
        repeated: bool = False,
    ) -> None:
        self.path = os.fspath(path)
        self.reason = reason
        self.repeated = repeated  # the same file, unchanged, was already reported: callers log it once
        super().__init__(
            message or f"{self.path}: {reason}",
            details=details if details is not None else {"path": self.path, "reason": reason},
        )


class StorageError(OrmahError):
    """The memory folder cannot be written (disk full, read-only, permissions)."""

    code = "storage_error"
    http_status = 507


class ExtensionUnavailable(OrmahError):
    """A required SQLite extension (sqlite-vec, FTS5) cannot be loaded."""

    code = "extension_unavailable"
    http_status = 500


class IndexUnavailable(OrmahError):
    """A table of the derived index is missing (a store not migrated, a table dropped by hand)."""

    code = "index_unavailable"
    http_status = 500


class EmbeddingUnavailable(OrmahError):
    """The embedding model cannot be loaded or run."""

    code = "embedding_unavailable"
    http_status = 500


class EmbeddingModelMismatch(EmbeddingUnavailable):
    """This host embeds with another model than the shared (PostgreSQL) index was built with: switching the store
    is `ormah rebuild`'s, never a side effect of one host's write or sync."""

    code = "embedding_model_mismatch"
