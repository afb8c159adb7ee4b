"""REST routes of the whisper app (mounted under /api/agent/): whisper, delivery, feedback, transcript capture.

Routes call services and selectors and shape the answer. `/whisper` is a boundary: whatever fails inside, the
agent gets silence (logged), never an error that could block its prompt.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Query, Router, Schema
from pydantic import ConfigDict, Field, ValidationError

from memory.context.workspace import git_head
from memory.domain.trust_requests import WorkspaceIn
from memory.schemas import ErrorOut
from memory.trust_schemas import WarningOut
from memory.spaces import git_toplevel, space_detect
from whisper import selectors
from whisper.services import feedback_submit, transcript_capture, whisper_delivered, whisper_respond
from whisper.state import SILENT_ERROR

logger = logging.getLogger(__name__)

router = Router(tags=["whisper"])

MAX_PROMPT_CHARS = 100_000


class WhisperIn(Schema):
    model_config = ConfigDict(extra="ignore")

    prompt: str = Field(default="", max_length=MAX_PROMPT_CHARS)
    session_id: str | None = Field(default=None, max_length=200)
    space: str | None = Field(default=None, max_length=100)
    cwd: str | None = Field(default=None, max_length=4096)
    budget_tokens: int | None = Field(default=None, ge=0, le=4000)
    timeout_ms: float | None = Field(default=None, gt=0,
                                     description="the caller's deadline; a later answer is not sent")


class WhisperOut(Schema):
    text: str
    node_ids: list[str]
    estimated_tokens: int
    decision: str
    whisper_log_id: int | None
    intent: str | None = None
    nudge: str | None = None
    store_due: bool = False
    elapsed_ms: float | None = None
    warnings: list[WarningOut] = []  # why a whispered memory may not hold (also lines in `text`)


class DeliveredOut(Schema):
    whisper_log_id: int
    delivered: bool


class FeedbackIn(Schema):
    model_config = ConfigDict(extra="forbid")

    node_id: str = Field(min_length=4, max_length=36)
    signal: Literal[1, -1]
    source: Literal["explicit", "implicit"] = "explicit"
    whisper_log_id: int | None = None


class FeedbackOut(Schema):
    node_id: str
    signal: int
    source: str
    whisper_log_id: int | None
    affinity_recorded: bool
    use_confirmed: bool
    merged_from: str | None = Field(default=None, description="the id sent, when a duplicate merge had moved that "
                                    "memory into node_id (the keeper); null otherwise")


class TranscriptIn(Schema):
    model_config = ConfigDict(extra="ignore")

    transcript_path: str = Field(min_length=1, max_length=4096, description="absolute path (or ~/...) to a .jsonl file",
                                 json_schema_extra={"pattern": r"^(/|~/).*[^/]\.jsonl$"})
    session_id: str | None = Field(default=None, max_length=200)
    space: str | None = Field(default=None, max_length=100)
    cwd: str | None = Field(default=None, max_length=4096)
    workspace: dict[str, Any] | None = Field(default=None, description="{path, branch, commit} (default: from cwd)")
    min_user_turns: int | None = Field(default=None, ge=0, le=1000)
    dry_run: bool = False


class TranscriptOut(Schema):
    status: str
    path: str
    start_offset: int
    end_offset: int
    user_turns: int
    candidates: int
    stored: list[str]
    duplicates: list[str]


class CandidateOut(Schema):
    node_uid: str
    short_id: str
    title: str
    source: str
    stage: str
    injected: bool
    retrieval_rank: int | None
    retrieval_score: float
    raw_cosine: float | None
    ce_abs: float | None
    affinity: float
    gate_score: float | None
    gate_threshold: float | None
    final_rank: int | None


class DecisionOut(Schema):
    id: int
    created: str
    session_id: str | None
    space: str | None
    intent: str
    decision: str
    node_ids: list[str]
    estimated_tokens: int
    gate: float | None
    elapsed_ms: float | None
    delivered: bool | None
    candidates: list[CandidateOut]


def _workspace(given: dict | None, cwd: str | None) -> WorkspaceIn | None:
    """The workspace the hook read, else the git repository around cwd; None outside one.

    A workspace that does not validate is ignored rather than refused: provenance must never cost a capture.
    """
    if given:
        try:
            return WorkspaceIn.model_validate(given)
        except ValidationError:
            logger.info("Ignoring an invalid workspace from the hook: %r", given)
    if not cwd or not cwd.startswith("/"):
        return None
    top = git_toplevel(Path(cwd).expanduser())
    if top is None:
        return None
    branch, commit = git_head(top)
    try:
        return WorkspaceIn(path=str(top), branch=branch, commit=commit)
    except ValidationError:
        return WorkspaceIn(path=str(top))


def _space(space: str | None, cwd: str | None) -> str | None:
    if space or not cwd:
        return space or None
    folder = Path(cwd).expanduser()
    return space_detect(configured=None, cwd=folder, home=Path.home(), git_root=git_toplevel(folder))


@router.post("/whisper", response={200: WhisperOut, 401: ErrorOut, 422: ErrorOut}, summary="Involuntary recall")
def whisper(request: HttpRequest, payload: WhisperIn):
    """Memories worth whispering into the agent's prompt, or empty text; `decision` names the deciding stage."""
    try:
        space = _space(payload.space, payload.cwd)
        result = whisper_respond(prompt=payload.prompt, session_id=payload.session_id, space=space,
                                 budget_tokens=payload.budget_tokens, timeout_ms=payload.timeout_ms)
    except Exception:  # noqa: BLE001
        # Trigger: a failure outside the pipeline (database locked, ledger write). Why: never block the agent.
        # Outcome: logged; the agent gets silence.
        logger.exception("Whisper endpoint failed")
        return WhisperOut(text="", node_ids=[], estimated_tokens=0, decision=SILENT_ERROR, whisper_log_id=None)
    return WhisperOut(text=result.text, node_ids=list(result.node_ids), estimated_tokens=result.estimated_tokens,
                      decision=result.decision, whisper_log_id=result.whisper_log_id, intent=result.intent,
                      nudge=result.nudge, store_due=result.store_due, elapsed_ms=result.elapsed_ms,
                      warnings=[WarningOut.model_validate(w, from_attributes=True) for w in result.warnings])


@router.post("/whisper/{whisper_log_id}/delivered", response={200: DeliveredOut, 401: ErrorOut},
             summary="Confirm a whisper reached the agent")
def whisper_delivery(request: HttpRequest, whisper_log_id: int):
    """The hook calls this after handing the text to the agent, so the ledger counts real deliveries only."""
    return {"whisper_log_id": whisper_log_id, "delivered": whisper_delivered(whisper_log_id=whisper_log_id)}


@router.post("/feedback", response={200: FeedbackOut, 401: ErrorOut, 404: ErrorOut, 409: ErrorOut, 422: ErrorOut},
             summary="Feedback on a memory")
def feedback(request: HttpRequest, payload: FeedbackIn):
    """+1 (helped) or −1 (misled) for a memory in the context of a whisper; +1 counts as confirmed use."""
    return feedback_submit(node_ref=payload.node_id, signal=payload.signal, source=payload.source,
                           whisper_log_id=payload.whisper_log_id)


@router.post("/ingest/transcript", response={200: TranscriptOut, 401: ErrorOut, 422: ErrorOut},
             summary="Capture memories from an agent transcript")
def ingest_transcript(request: HttpRequest, payload: TranscriptIn):
    """Read the transcript from its byte cursor and store new decisions, preferences and "remember that"s."""
    return transcript_capture(path=payload.transcript_path, session_id=payload.session_id,
                              space=_space(payload.space, payload.cwd), min_user_turns=payload.min_user_turns,
                              dry_run=payload.dry_run, workspace=_workspace(payload.workspace, payload.cwd))


@router.get("/whisper/decisions", response={200: list[DecisionOut], 401: ErrorOut}, summary="Why whispers fired")
def decisions(request: HttpRequest, limit: int = Query(20, ge=1, le=200), session_id: str | None = None):
    """The newest whisper decisions with every candidate, its stage and scores."""
    return [{
        "id": d.id, "created": d.created.isoformat(), "session_id": d.session_id, "space": d.space,
        "intent": d.intent, "decision": d.decision, "node_ids": d.node_ids, "estimated_tokens": d.estimated_tokens,
        "gate": d.gate, "elapsed_ms": d.elapsed_ms, "delivered": d.delivered, "candidates": list(d.candidates.all()),
    } for d in selectors.decision_list(limit=limit, session_id=session_id)]
