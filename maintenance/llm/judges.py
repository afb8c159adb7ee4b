"""The prompts the jobs send, their pydantic answer models, and batching of several pairs per call.

Each judge returns verdicts keyed by the pair's position; pairs the model skipped are simply absent (the job
leaves them for the next run). Memory content reaches the LLM in full up to the per-item limits below.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field, field_validator

from maintenance.detectors.facts import NodeFacts, Pair
from maintenance.detectors.links import normalise_relationship
from maintenance.llm.base import LLMProvider

PAIR_CONTENT_CHARS = 2000
EVOLUTION_ALIASES = {"change", "update", "updated", "revised", "revision", "refinement", "evolved", "evolution"}
TENSION_ALIASES = {"disagreement", "contradiction", "conflict", "tension", "contradicts"}

DUPLICATE_SYSTEM = """You decide whether pairs of memories are duplicates. Be conservative: they are NOT duplicates
if they cover different aspects, granularities or points in time, a decision versus its consequence, an evaluation
versus the resulting decision, or a parameter change with its reasoning. When they are duplicates, merged_content
must be the union of every concrete detail of both (names, numbers, dates, reasons) and merged_title a short title.
Answer with JSON only: {"results": [{"pair": <number>, "is_duplicate": true|false, "merged_title": "...",
"merged_content": "...", "reason": "..."}]} with one result per pair."""

CONFLICT_SYSTEM = """You check pairs of beliefs for conflicts. Stop at the first "no": memories from different
projects never conflict; the same project but different components do not; granularity differences, pivots and
configuration changes are evolution at most; evolution (a newer view replacing an older one) is the common case,
tension (both held at once, incompatible) is rare. Answer with JSON only: {"results": [{"pair": <number>,
"same_subject": true|false, "conflict": true|false, "type": "evolution"|"tension"|"none", "evolved_node": "a"|"b",
"explanation": "..."}]} where evolved_node names the NEWER memory that supersedes the other."""

LINK_SYSTEM = """You classify how memory A relates to memory B. Apply a strict test: would surfacing B genuinely help
someone reading A? Prefer structural types (supports, part_of, depends_on); use contradicts only for real
disagreement; related_to only with a concrete one-sentence reason; default to none. Traps: a general preference
versus an exception, a superseded fact versus a newer decision, the same technology in different projects,
sequential metric snapshots. Answer with JSON only: {"results": [{"pair": <number>, "relationship":
"supports"|"part_of"|"depends_on"|"contradicts"|"related_to"|"none", "reason": "..."}]}"""

CONSOLIDATE_SYSTEM = """You consolidate several related memories into one. Preserve every concrete detail and all
reasoning, remove only true redundancy. Choose the type by priority decision > procedure > observation > concept >
fact. Write a keyword-rich title and a summary of 3 to 8 sentences. Answer with JSON only: {"title": "...",
"summary": "...", "type": "..."}"""


class DuplicateVerdict(BaseModel):
    pair: int
    is_duplicate: bool = False
    merged_title: str | None = None
    merged_content: str | None = None
    reason: str = ""


class ConflictVerdict(BaseModel):
    pair: int
    same_subject: bool = False
    conflict: bool = False
    type: Literal["evolution", "tension", "none"] = "none"
    evolved_node: Literal["a", "b"] | None = None
    explanation: str = ""

    @field_validator("type", mode="before")
    @classmethod
    def _type(cls, value: object) -> str:
        text = str(value or "").strip().lower()
        return "evolution" if text in EVOLUTION_ALIASES else "tension" if text in TENSION_ALIASES else "none"

    @field_validator("evolved_node", mode="before")
    @classmethod
    def _node(cls, value: object) -> str | None:
        text = str(value or "").strip().lower()
        return text if text in ("a", "b") else None


class LinkVerdict(BaseModel):
    pair: int
    relationship: str = "none"
    reason: str = ""

    @field_validator("relationship", mode="before")
    @classmethod
    def _relationship(cls, value: object) -> str:
        return normalise_relationship(str(value or ""))


class DuplicateAnswer(BaseModel):
    results: list[DuplicateVerdict] = Field(default_factory=list)


class ConflictAnswer(BaseModel):
    results: list[ConflictVerdict] = Field(default_factory=list)


class LinkAnswer(BaseModel):
    results: list[LinkVerdict] = Field(default_factory=list)


class Consolidation(BaseModel):
    title: str = Field(min_length=1, max_length=300)
    summary: str = Field(min_length=1)
    type: str = "concept"


def _node_text(label: str, node: NodeFacts, limit: int) -> str:
    return (f"{label} [{node.type}, space {node.space or 'global'}, created {node.created:%Y-%m-%d}]: "
            f"{node.title or '(untitled)'}\n{node.content[:limit]}")


def _pairs_text(pairs: Sequence[Pair], limit: int) -> str:
    return "\n\n".join(f"Pair {i}:\n{_node_text('A', p.a, limit)}\n{_node_text('B', p.b, limit)}"
                       for i, p in enumerate(pairs, 1))


def _batched(llm: LLMProvider, pairs: Sequence[Pair], per_call: int, system: str, schema: type, limit: int) -> dict:
    verdicts: dict[int, object] = {}
    for start in range(0, len(pairs), per_call):
        chunk = pairs[start:start + per_call]
        answer = llm.complete_json(system=system, user=_pairs_text(chunk, limit), schema=schema)
        for verdict in answer.results:
            if 1 <= verdict.pair <= len(chunk):
                verdicts[start + verdict.pair - 1] = verdict
    return verdicts


def judge_duplicates(llm: LLMProvider, pairs: Sequence[Pair], *, per_call: int) -> dict[int, DuplicateVerdict]:
    """Duplicate verdicts by pair position."""
    return _batched(llm, pairs, per_call, DUPLICATE_SYSTEM, DuplicateAnswer, PAIR_CONTENT_CHARS)


def judge_conflicts(llm: LLMProvider, pairs: Sequence[Pair], *, per_call: int) -> dict[int, ConflictVerdict]:
    """Conflict verdicts by pair position (creation dates included, so evolution has a direction)."""
    return _batched(llm, pairs, per_call, CONFLICT_SYSTEM, ConflictAnswer, PAIR_CONTENT_CHARS)


def judge_links(llm: LLMProvider, pairs: Sequence[Pair], *, per_call: int) -> dict[int, LinkVerdict]:
    """Relationship verdicts by pair position."""
    return _batched(llm, pairs, per_call, LINK_SYSTEM, LinkAnswer, PAIR_CONTENT_CHARS)


def consolidate(llm: LLMProvider, cluster: Sequence[NodeFacts]) -> Consolidation:
    """One synthesis from the FULL content of every source (clusters are sized to the prompt limit upstream)."""
    user = "\n\n".join(_node_text(f"Memory {i}", n, len(n.content)) for i, n in enumerate(cluster, 1))
    return llm.complete_json(system=CONSOLIDATE_SYSTEM, user=user, schema=Consolidation)
