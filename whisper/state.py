"""Values passed between whisper stages: the request, the per-call run state, candidates and the result."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np

from memory.domain.search import SearchHit, SearchQuery
from memory.domain.trust import RecallWarning

# Decisions: "injected" or "silent:<why>"; the stage that decided names it.
INJECTED = "injected"
SILENT_EMPTY = "silent:empty"
SILENT_SHORT = "silent:short"
SILENT_SYNTHETIC = "silent:synthetic"
SILENT_ACK = "silent:acknowledgement"
SILENT_CONVERSATIONAL = "silent:conversational"
SILENT_TOPIC_REPEAT = "silent:topic_repeat"
SILENT_NO_CANDIDATES = "silent:no_candidates"
SILENT_BELOW_FLOOR = "silent:below_floor"
SILENT_NO_OVERLAP = "silent:no_overlap"
SILENT_BELOW_GATE = "silent:below_gate"
SILENT_OFF_FOCUS = "silent:off_focus"
SILENT_BUDGET = "silent:budget"
SILENT_DISABLED = "silent:disabled"
SILENT_ERROR = "silent:error"
SILENT_LATE = "silent:late"

# Candidate stages: where a candidate stopped, or how it was injected.
STAGE_CANDIDATE = "candidate"
STAGE_FLOOR = "below_floor"
STAGE_POST_FLOOR = "below_post_rerank_floor"
STAGE_SPACE = "identity_space"
STAGE_OVERLAP = "no_overlap"
STAGE_GATE = "below_gate"
STAGE_OFF_FOCUS = "off_focus"
STAGE_SERVED = "already_served"
STAGE_CAP = "cap"
STAGE_BUDGET = "budget"
STAGE_INJECTED = "injected"
STAGE_EXPLORATION = "exploration"


@dataclass(frozen=True, slots=True)
class WhisperRequest:
    prompt: str
    session_id: str | None = None
    space: str | None = None
    budget_tokens: int | None = None
    now: datetime | None = None


@dataclass(frozen=True, slots=True)
class RecentPrompt:
    prompt: str
    vector: np.ndarray | None
    at: datetime


@dataclass(slots=True)
class Candidate:
    node_id: str
    short_id: str
    title: str
    content: str
    type: str
    space: str | None
    confidence: float
    created: datetime
    retrieval_rank: int | None
    retrieval_score: float
    raw_cosine: float | None
    score: float  # orders candidates (blended); the gate looks at gate_score
    probability: float | None = None  # recall's calibrated probability of relevance (None: not a recall hit)
    identity: bool = False
    source: str = "search"  # search | identity
    ce_raw: float | None = None
    ce_abs: float | None = None
    affinity: float = 0.0
    space_factor: float = 1.0
    overlap: bool = False
    standing: float | None = None  # z of its cosine over the scope, when it passed the overlap filter on it
    gate_score: float | None = None
    gate_threshold: float | None = None
    stage: str = STAGE_CANDIDATE
    final_rank: int | None = None
    exploration: bool = False
    hit: SearchHit | None = None

    @property
    def display_title(self) -> str:
        title = (self.title or "").strip()
        if title:
            return title
        text = " ".join(self.content.split())
        return text if len(text) <= 60 else text[:60].rstrip() + "…"


@dataclass(slots=True)
class WhisperRun:
    """Mutable state of one whisper call, filled stage by stage."""

    request: WhisperRequest
    now: datetime
    budget_tokens: int
    recent: list[RecentPrompt] | None = None  # None: the first prompt of a session (or after the gap)
    matched_pattern: str | None = None
    intent: object | None = None  # classifier.Intent
    prompt_vec: np.ndarray | None = None
    follow_up: bool = False
    query: str = ""
    query_vec: np.ndarray | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    about_user: bool = False
    identity_question: bool = False  # identity intent, or a short question about a fact of the user's own
    standouts: dict[str, float] = field(default_factory=dict)  # identity memories a task needs (whisper.conventions)
    target_space: str | None = None  # the project recall scores against: the caller's, or the one the prompt names
    identity_ids: frozenset[str] = frozenset()
    candidates: list[Candidate] = field(default_factory=list)  # every candidate ever seen
    pool: list[Candidate] = field(default_factory=list)  # the ones still in the running
    selected: list[Candidate] = field(default_factory=list)
    reranked: bool = False
    gate: float | None = None
    log_id: int | None = None
    text: str = ""
    estimated_tokens: int = 0

    @property
    def prompt(self) -> str:
        return self.request.prompt

    def drop(self, keep: list[Candidate], stage: str) -> None:
        """Keep only `keep` in the pool; the others stop at `stage`."""
        kept = {id(c) for c in keep}
        for cand in self.pool:
            if id(cand) not in kept:
                cand.stage = stage
        self.pool = list(keep)


@dataclass(frozen=True, slots=True)
class WhisperResult:
    text: str
    node_ids: tuple[str, ...]
    estimated_tokens: int
    decision: str
    whisper_log_id: int | None = None
    intent: str | None = None
    nudge: str | None = None
    store_due: bool = False
    elapsed_ms: float | None = None
    warnings: tuple[RecallWarning, ...] = ()  # of the whispered memories (docs/trust.md)

    @property
    def injected(self) -> bool:
        return self.decision == INJECTED


@dataclass(frozen=True, slots=True)
class Deps:
    """What the stages need from the outside world, as plain callables (fakes in unit tests)."""

    embed: Callable[[str], np.ndarray]
    archetypes: Callable[[], dict[str, np.ndarray]]
    search: Callable[[SearchQuery], list[SearchHit]]
    cosines: Callable[[np.ndarray, list[int]], dict[int, float]]
    identity: Callable[[], list[SearchHit]]
    feedback: Callable[[list[str]], dict]
    served: Callable[[], frozenset[str]] = lambda: frozenset()
    self_ids: Callable[[], frozenset[str]] = lambda: frozenset()
    spaces: Callable[[], frozenset[str]] = lambda: frozenset()  # the projects that hold memories
    maintenance_due: Callable[[], bool] = lambda: False
    reranker: object | None = None  # reranker.Reranker
    warnings: Callable[[list[SearchHit]], list[SearchHit]] = list  # the hits with their recall warnings
    idf: Callable[[list[str]], dict[str, float]] = lambda terms: {}  # recall's IDF of stems in the store (gate input)
    # (mean, spread) of the query's cosine to every memory in scope (the overlap filter's standout pass), or None
    spread: Callable[[np.ndarray], tuple[float, float] | None] = lambda vec: None
