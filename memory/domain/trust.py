"""Trust in recall, the pure rules (docs/trust.md): temporal relations, recall warnings, verification, sessions.

Recall never drops a memory because it may be stale: it attaches warnings. The rules here take plain values
(relations, provenance, what the workspace looks like now, which cited events exist) and say which warnings apply.
Reading git, hashing files and querying the index is the caller's job (memory.context).
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from memory.domain.enums import EdgeType
from memory.domain.node import Provenance, as_utc

SESSION_STATE_EVENT = "session_state"
RELATION_EVENT = "relation"
MAX_CITATION_WARNINGS = 5
MIN_COMMIT_PREFIX = 7


class WarningKind(StrEnum):
    """Why a recalled memory may not hold any more."""

    TEMPORAL_CONTRADICTION = "temporal_contradiction"
    TEMPORAL_SUPERSESSION = "temporal_supersession"
    CITATION_MISSING = "citation_missing"
    FILE_MISSING = "file_missing"
    FILE_HASH_MISMATCH = "file_hash_mismatch"
    BRANCH_DRIFT = "branch_drift"
    COMMIT_DRIFT = "commit_drift"


class RelationKind(StrEnum):
    """The temporal relations of seed 004; each is stored as one edge type (RELATION_EDGES)."""

    SUPERSEDES = "supersedes"
    CONTRADICTS = "contradicts"
    DERIVES = "derives"
    EXTENDS = "extends"
    SUPPORTS = "supports"


class VerificationStatus(StrEnum):
    """The outcome of one check of a memory."""

    FAILED = "failed"
    PASSED = "passed"
    STALE = "stale"
    UNKNOWN = "unknown"
    WARNING = "warning"


class SessionStatus(StrEnum):
    """Where a session's task stands; only active sessions reach context packs on their own."""

    ACTIVE = "active"
    BLOCKED = "blocked"
    COMPLETE = "complete"


# supersedes is evolved_from (newer -> older) and derives is derived_from (derived -> source): the same relations
# under the names the graph already had, so nothing is stored twice (docs/trust.md, "Relations").
RELATION_EDGES: dict[RelationKind, EdgeType] = {
    RelationKind.SUPERSEDES: EdgeType.EVOLVED_FROM,
    RelationKind.CONTRADICTS: EdgeType.CONTRADICTS,
    RelationKind.DERIVES: EdgeType.DERIVED_FROM,
    RelationKind.EXTENDS: EdgeType.EXTENDS,
    RelationKind.SUPPORTS: EdgeType.SUPPORTS,
}
EDGE_RELATIONS: dict[str, RelationKind] = {edge.value: kind for kind, edge in RELATION_EDGES.items()}
WARNING_EDGES = (EdgeType.EVOLVED_FROM.value, EdgeType.CONTRADICTS.value)


@dataclass(frozen=True, slots=True)
class Relation:
    """A temporal relation between two memories, read from a connection of `from_id`'s file."""

    kind: RelationKind
    from_id: str
    to_id: str
    valid_from: datetime | None = None
    valid_until: datetime | None = None

    def is_active(self, now: datetime) -> bool:
        """True when `now` lies inside [valid_from, valid_until)."""
        now = as_utc(now)
        return (self.valid_from is None or as_utc(self.valid_from) <= now) and \
            (self.valid_until is None or now < as_utc(self.valid_until))


def relation_of(edge: str, *, from_id: str, to_id: str, valid_from: datetime | None = None,
                valid_until: datetime | None = None) -> Relation | None:
    """The temporal relation an edge expresses, or None for edges that are not one (part_of, related_to, ...)."""
    kind = EDGE_RELATIONS.get(str(edge))
    if kind is None:
        return None
    return Relation(kind=kind, from_id=from_id, to_id=to_id, valid_from=valid_from, valid_until=valid_until)


@dataclass(frozen=True, slots=True)
class RecallWarning:
    """One reason to doubt a recalled item; `related_id` names the other memory, the event or the file."""

    kind: WarningKind
    item_id: str
    message: str
    related_id: str | None = None


@dataclass(frozen=True, slots=True)
class VerificationWarning:
    """The latest check of an item when it did not pass."""

    item_id: str
    status: VerificationStatus
    message: str
    checker: str
    checked_at: datetime


# ---------------------------------------------------------------------------
# Temporal warnings
# ---------------------------------------------------------------------------

def temporal_warnings(item_id: str, relations: Iterable[Relation], *, now: datetime,
                      labels: Mapping[str, str] | None = None) -> list[RecallWarning]:
    """Supersession (another memory supersedes this one) and contradiction (either direction), active ones only."""
    labels = labels or {}
    found: dict[tuple[WarningKind, str], RecallWarning] = {}
    for rel in relations:
        if not rel.is_active(now) or rel.from_id == rel.to_id:
            continue
        if rel.kind == RelationKind.SUPERSEDES and rel.to_id == item_id:
            other, kind, verb = rel.from_id, WarningKind.TEMPORAL_SUPERSESSION, "superseded by"
        elif rel.kind == RelationKind.CONTRADICTS and item_id in (rel.from_id, rel.to_id):
            other = rel.to_id if rel.from_id == item_id else rel.from_id
            kind, verb = WarningKind.TEMPORAL_CONTRADICTION, "contradicted by"
        else:
            continue
        since = f" since {as_utc(rel.valid_from):%Y-%m-%d}" if rel.valid_from is not None else ""
        label = labels.get(other)
        text = f"{verb} {other[:8]}" + (f" ({label})" if label else "") + since
        found.setdefault((kind, other), RecallWarning(kind=kind, item_id=item_id, message=text, related_id=other))
    return sorted(found.values(), key=lambda w: (w.kind.value, w.related_id or ""))


# ---------------------------------------------------------------------------
# Citations
# ---------------------------------------------------------------------------

def citation_warnings(item_id: str, cited: Sequence[str], known: Iterable[str]) -> list[RecallWarning]:
    """One warning per cited event the evidence ledger does not hold (at most MAX_CITATION_WARNINGS)."""
    have = set(known)
    missing = [c for c in dict.fromkeys(cited) if c not in have]
    warnings = [RecallWarning(WarningKind.CITATION_MISSING, item_id, f"cited evidence {c} is not in the ledger", c)
                for c in missing[:MAX_CITATION_WARNINGS]]
    if len(missing) > MAX_CITATION_WARNINGS:
        more = len(missing) - MAX_CITATION_WARNINGS
        warnings[-1] = RecallWarning(WarningKind.CITATION_MISSING, item_id,
                                     f"{warnings[-1].message} (and {more} more)", missing[MAX_CITATION_WARNINGS - 1])
    return warnings


# ---------------------------------------------------------------------------
# Workspace drift
# ---------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class WorkspaceState:
    """The agent's workspace as it is now: its root folder and, when it is a git repository, branch and commit."""

    path: str
    branch: str | None = None
    commit: str | None = None


@dataclass(frozen=True, slots=True)
class FileFact:
    """What the file a memory names looks like now (`sha256` None when it is missing or could not be read)."""

    path: str
    exists: bool
    sha256: str | None = None


def same_workspace(provenance: Provenance, workspace: WorkspaceState) -> bool:
    """True when the memory was made in this workspace, or does not say where it was made."""
    if provenance.workspace_path is None:
        return True
    return posixpath.normpath(provenance.workspace_path) == posixpath.normpath(workspace.path)


def resolve_file(provenance: Provenance, workspace: WorkspaceState) -> str | None:
    """The absolute path of the file a memory names (relative paths are taken from its workspace), or None."""
    if not provenance.file_path:
        return None
    root = provenance.workspace_path or workspace.path
    return posixpath.normpath(posixpath.join(root, provenance.file_path))


def _commits_differ(a: str, b: str) -> bool:
    a, b = a.lower(), b.lower()
    if min(len(a), len(b)) < MIN_COMMIT_PREFIX:
        return a != b
    return not (a.startswith(b) or b.startswith(a))


def drift_warnings(item_id: str, provenance: Provenance, workspace: WorkspaceState,
                   file: FileFact | None) -> list[RecallWarning]:
    """branch_drift and commit_drift against the agent's workspace; file_missing and file_hash_mismatch for its file.

    Branch and commit are compared only for memories made in this workspace; the file is checked whenever the
    caller could resolve it (`file` None: no file named, or outside every workspace it may read).
    """
    warnings: list[RecallWarning] = []
    if same_workspace(provenance, workspace):
        if provenance.git_branch and workspace.branch and provenance.git_branch != workspace.branch:
            warnings.append(RecallWarning(
                WarningKind.BRANCH_DRIFT, item_id,
                f"made on branch {provenance.git_branch}, workspace is on {workspace.branch}", workspace.branch))
        if provenance.git_commit and workspace.commit and _commits_differ(provenance.git_commit, workspace.commit):
            warnings.append(RecallWarning(
                WarningKind.COMMIT_DRIFT, item_id,
                f"made at commit {provenance.git_commit[:12]}, workspace is at {workspace.commit[:12]}",
                workspace.commit))
    if file is not None and provenance.file_path:
        if not file.exists:
            warnings.append(RecallWarning(WarningKind.FILE_MISSING, item_id,
                                          f"file {provenance.file_path} no longer exists", file.path))
        elif provenance.content_sha256 and file.sha256 and file.sha256 != provenance.content_sha256.lower():
            warnings.append(RecallWarning(WarningKind.FILE_HASH_MISMATCH, item_id,
                                          f"file {provenance.file_path} changed since this was remembered", file.path))
    return warnings


def warning_line(warning: RecallWarning | VerificationWarning) -> str:
    """One short line for an agent: `! temporal_supersession: superseded by 1a2b3c4d (...)`."""
    if isinstance(warning, VerificationWarning):
        detail = f" ({warning.message})" if warning.message else ""
        return f"! verification_{warning.status.value}: {warning.checker or 'check'}{detail}"
    return f"! {warning.kind.value}: {warning.message}"
