"""Duplicate detection (reference §6.3): the composite score, the keeper rule, and the no-LLM verdicts.

composite = 0.6·cosine + 0.2·title_ratio + 0.2·token_jaccard. When either title is missing the title term is
dropped and the other two are rescaled (0.75·cosine + 0.25·jaccard), so untitled memories can still reach the
auto-merge line. Without an LLM a pair merges automatically only when it is a *clear* duplicate: cosine ≥ 0.92,
composite ≥ the auto-merge threshold (0.85), no changed numbers, dates or negation, and the removed node adds no
content word the keeper lacks (so nothing is lost even without rewriting). docs/jobs.md has the calibration.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from maintenance.detectors.compare import compare
from maintenance.detectors.conflicts import change_signals
from maintenance.detectors.facts import NodeFacts, Pair, ProposalDraft, ProposalKind, basis_of
from maintenance.detectors.payloads import MergePayload
from maintenance.detectors.text import content_words, jaccard, title_ratio, tokens

TIER_RANK = {"core": 2, "working": 1, "archival": 0}
CANDIDATE_MIN_COS = 0.25
CANDIDATE_MIN_COMPOSITE = 0.60
CLEAR_MIN_COS = 0.92
LIKELY_MIN_COS = 0.85
LIKELY_MIN_COMPOSITE = 0.75
NEIGHBOURS = 6


@dataclass(frozen=True, slots=True)
class DuplicateScore:
    cosine: float
    title: float | None
    token: float
    composite: float

    def describe(self) -> str:
        """In plain words, for a person deciding."""
        return f"similarity {self.cosine:.2f}, {round(self.token * 100)}% of the words shared"

    def as_dict(self) -> dict:
        return {"composite": round(self.composite, 4), "cosine": round(self.cosine, 4),
                "title": None if self.title is None else round(self.title, 4), "token": round(self.token, 4)}


def duplicate_score(a: NodeFacts, b: NodeFacts, cosine: float) -> DuplicateScore:
    """The composite duplicate score of two nodes."""
    token = jaccard(set(tokens(f"{a.title} {a.content}")), set(tokens(f"{b.title} {b.content}")))
    title = title_ratio(a.title, b.title)
    if title is None:
        composite = 0.75 * cosine + 0.25 * token
    else:
        composite = 0.6 * cosine + 0.2 * title + 0.2 * token
    return DuplicateScore(cosine=cosine, title=title, token=token, composite=composite)


def keeper_first(a: NodeFacts, b: NodeFacts) -> tuple[NodeFacts, NodeFacts]:
    """(keeper, removed): the higher tier, then the longer content, then the more recently updated."""
    rank = lambda n: (TIER_RANK.get(n.tier, 0), len(n.content), n.updated, n.uid)  # noqa: E731
    return (a, b) if rank(a) >= rank(b) else (b, a)


def duplicate_candidates(pairs: Iterable[Pair], *, min_cos: float = CANDIDATE_MIN_COS,
                         min_composite: float = CANDIDATE_MIN_COMPOSITE) -> list[tuple[Pair, DuplicateScore]]:
    """Same-type pairs (never the self node) whose composite reaches `min_composite`, best first."""
    found = []
    for pair in pairs:
        if pair.a.is_self or pair.b.is_self or pair.a.type != pair.b.type or pair.cosine < min_cos:
            continue
        if 0.6 * pair.cosine + 0.4 < min_composite:
            continue
        score = duplicate_score(pair.a, pair.b, pair.cosine)
        if score.composite >= min_composite:
            found.append((pair, score))
    return sorted(found, key=lambda ps: -ps[1].composite)


def protected(node: NodeFacts) -> bool:
    """Core and identity memories are only ever merged after review."""
    return node.tier == "core" or node.identity


def differs(pair: Pair) -> bool:
    """The two say different things: distinct items, words or a value swapped in place, an antonym, a negation,
    a change, new numbers."""
    cmp = compare(pair.a.title, pair.a.content, pair.b.title, pair.b.content)
    if (cmp.distinct or cmp.substitution or cmp.opposed or cmp.negation_differs or cmp.reversed_order
            or cmp.change_marker or cmp.quantities_differ or cmp.approximate):
        return True
    signals = change_signals(pair.a, pair.b)
    return signals["numbers"] or signals["dates"]


def heuristic_verdict(pair: Pair, score: DuplicateScore, *, auto_threshold: float) -> str | None:
    """Without an LLM: "clear" (merge now, undoable), "likely" (propose) or None (leave alone)."""
    if differs(pair):
        return None
    keep, gone = keeper_first(pair.a, pair.b)
    adds_nothing = content_words(f"{gone.title} {gone.content}") <= content_words(f"{keep.title} {keep.content}")
    if score.cosine >= CLEAR_MIN_COS and score.composite >= auto_threshold and adds_nothing:
        return "likely" if protected(keep) or protected(gone) else "clear"
    if score.cosine >= LIKELY_MIN_COS and score.composite >= LIKELY_MIN_COMPOSITE:
        return "likely"
    return None


def merge_draft(pair: Pair, score: DuplicateScore, *, merged_title: str | None = None,
                merged_content: str | None = None, why: str = "") -> ProposalDraft:
    """A merge proposal: keeper and removed by the keeper rule, the merged text to preview (if any)."""
    keep, gone = keeper_first(pair.a, pair.b)
    reason = f"{why} ({score.describe()})" if why else f"They say the same thing in other words ({score.describe()})"
    return ProposalDraft(
        kind=ProposalKind.MERGE, node_uids=(keep.uid, gone.uid), action=f"Merge two {keep.type} memories into one",
        reason=reason, score=round(score.composite, 4),
        payload=MergePayload(keep_id=keep.uid, discard_id=gone.uid, merged_title=merged_title,
                             merged_content=merged_content, score=score.as_dict()).as_json(),
        basis=basis_of(keep, gone),
    )
