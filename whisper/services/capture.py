"""Transcript capture: read a transcript from its byte cursor, extract candidates, store the ones not yet known."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from memory import runtime
from memory.domain.evidence import MAX_EVENT_TEXT, EvidenceEvent, EvidenceKind, new_event_id
from memory.domain.node import as_utc, utcnow
from memory.domain.requests import NodeCreate
from memory.domain.scopes import GLOBAL_SCOPE, Scope, ScopeType
from memory.domain.trust_requests import WorkspaceIn
from memory.search import vectors
from memory.services import evidence_append, node_create
from whisper.capture import Extracted, extract_candidates
from whisper.conf import get_conf
from whisper.errors import TranscriptUnreadable
from whisper.models import TranscriptCursorRow
from whisper.transcript import TranscriptResult, parse_transcript

logger = logging.getLogger(__name__)

MAX_READ_BYTES = 10 * 1024 * 1024
CAPTURE_TAG = "whisper-out"


@dataclass(frozen=True, slots=True)
class CaptureResult:
    status: str  # stored | unchanged | waiting | dry_run
    path: str
    start_offset: int
    end_offset: int
    user_turns: int
    candidates: int
    stored: list[str] = field(default_factory=list)  # node ids
    duplicates: list[str] = field(default_factory=list)  # candidate texts already known


def _transcript_path(raw: str) -> Path:
    try:
        path = Path(raw).expanduser()
    except RuntimeError:  # ~user of no such user
        path = Path(raw)
    if not path.is_absolute() or path.suffix != ".jsonl":
        raise TranscriptUnreadable(f"{raw}: a transcript must be an absolute path to a .jsonl file")
    try:
        found = path.is_file()
    except OSError as exc:  # a name past the file system's limit (is_file raises ENAMETOOLONG instead of False)
        raise TranscriptUnreadable(f"{raw}: {exc.strerror or exc}") from None
    if not found:
        raise TranscriptUnreadable(f"{raw}: no such file")
    return path


def _read(path: Path, offset: int) -> bytes:
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(MAX_READ_BYTES)
    except OSError as exc:
        raise TranscriptUnreadable(f"{path}: {exc.strerror or exc}") from exc


def _novel(candidates: list[Extracted], *, threshold: float) -> tuple[list[tuple[Extracted, np.ndarray]], list[str]]:
    """Candidates whose embedding is not within `threshold` cosine of a stored memory or of an earlier candidate."""
    if not candidates:
        return [], []
    embedder = runtime.embedder()
    vecs = np.asarray(embedder.embed_documents([c.content for c in candidates]), dtype=np.float32)
    keep, dupes = [], []
    for cand, vec in zip(candidates, vecs):
        known = vectors.knn(vec, 1) if vectors.table_dim() else []
        if (known and known[0].cosine >= threshold) or any(float(vec @ v) >= threshold for _, v in keep):
            dupes.append(cand.content)
            continue
        keep.append((cand, vec))
    return keep, dupes


def _turn_events(parsed: TranscriptResult, file: Path, *, session_id: str | None, space: str | None,
                 now: datetime) -> list[EvidenceEvent]:
    """One evidence event per turn read (user_message / assistant_message), in order (docs/trust.md)."""
    session = (parsed.session_id or session_id or "").strip() or None  # spaces name no session, as evidence reads
    scope = Scope(ScopeType.SESSION, session) if session else (
        Scope(ScopeType.PROJECT, space) if space else GLOBAL_SCOPE)
    kinds = {"user": EvidenceKind.USER_MESSAGE, "assistant": EvidenceKind.ASSISTANT_MESSAGE}
    return [EvidenceEvent(id=new_event_id(now), kind=kinds[turn.role], at=now, text=turn.text[:MAX_EVENT_TEXT],
                          session_id=session, scope=scope, source=f"transcript:{parsed.source}",
                          data={"transcript": file.name, "turn": i})
            for i, turn in enumerate(parsed.turns)]


def transcript_capture(*, path: str, session_id: str | None = None, space: str | None = None,
                       min_user_turns: int | None = None, dry_run: bool = False, now: datetime | None = None,
                       workspace: WorkspaceIn | None = None) -> CaptureResult:
    """Store memory candidates from the part of a transcript not read before; the cursor moves on success.

    Every turn read becomes an evidence event and each stored memory cites the event of its turn; `workspace`
    (the agent's folder, branch and commit) becomes the memories' provenance.
    Waits (status `waiting`, cursor unmoved) until the unread part holds `min_user_turns` user turns.
    Raises TranscriptUnreadable for a path that is not a readable .jsonl file.
    """
    conf = get_conf()
    now = as_utc(now or utcnow())
    file = _transcript_path(path)
    cursor, _ = TranscriptCursorRow.objects.get_or_create(path=str(file), defaults={"updated": now})
    start = cursor.offset if cursor.offset <= file.stat().st_size else 0  # a shorter file was rewritten
    parsed = parse_transcript(_read(file, start), start_offset=start, session_id=session_id)
    base = dict(path=str(file), start_offset=start, end_offset=parsed.end_offset, user_turns=parsed.user_turn_count)
    if parsed.end_offset == start:
        return CaptureResult(status="unchanged", candidates=0, **base)
    needed = conf.store_min_turns if min_user_turns is None else min_user_turns
    if parsed.user_turn_count < needed:
        return CaptureResult(status="waiting", candidates=0, **base)
    candidates = extract_candidates(parsed.turns)
    fresh, dupes = _novel(candidates, threshold=conf.store_dedup_threshold)
    if dry_run:
        return CaptureResult(status="dry_run", candidates=len(candidates), duplicates=dupes,
                             stored=[c.content for c, _ in fresh], **base)
    claimed = TranscriptCursorRow.objects.filter(id=cursor.id, offset=cursor.offset).update(
        offset=parsed.end_offset, updated=now, session_id=(parsed.session_id or session_id or "")[:200])
    if not claimed:
        return CaptureResult(status="unchanged", candidates=0, **base)  # another capture got there first
    stored = []
    source = f"transcript:{parsed.source}"
    where = {} if workspace is None else {"workspace_path": workspace.path, "git_branch": workspace.branch,
                                          "git_commit": workspace.commit}
    try:
        events = evidence_append(events=_turn_events(parsed, file, session_id=session_id, space=space, now=now))
        for cand, _ in fresh:
            node = node_create(request=NodeCreate(content=cand.content, type=cand.type, space=space, source=source,
                                                  tags=[CAPTURE_TAG, f"captured-{cand.rule}"],
                                                  source_event_ids=[events[cand.turn].id], **where), now=now).node
            stored.append(node.id)
    except Exception:
        # Trigger: a write failed mid-way. Why: the unread part must be read again. Outcome: cursor put back.
        TranscriptCursorRow.objects.filter(id=cursor.id).update(offset=cursor.offset)
        raise
    TranscriptCursorRow.objects.filter(id=cursor.id).update(stored=cursor.stored + len(stored))
    logger.info("Captured %s memories from %s (%s candidates, %s duplicates)", len(stored), file.name,
                len(candidates), len(dupes))
    return CaptureResult(status="stored", candidates=len(candidates), stored=stored, duplicates=dupes, **base)
