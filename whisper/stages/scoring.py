"""Scoring stages between retrieval and the gate: reranker, affinity boost, identity space, topical overlap."""

from __future__ import annotations

import logging
import math

from whisper.affinity import AffinityParams, affinity_boost
from whisper.classifier import IDENTITY
from whisper.conf import WhisperConf
from whisper.reranker import ce_absolute
from whisper.state import (
    SILENT_BELOW_FLOOR, SILENT_NO_OVERLAP, STAGE_OVERLAP, STAGE_POST_FLOOR, STAGE_SPACE, Candidate, Deps, WhisperRun,
)
from whisper.facts import named_facts, question_facts
from whisper.memo import MEMORY_WORDS_BYTES, PAGE_MEMORY_WORDS_BYTES, SPACE_WORDS_BYTES, args_cost, byte_lru
from whisper.text import PAGE_CACHE_TEXTS, TOPIC_CACHE_CHARS, topic_tokens

logger = logging.getLogger(__name__)


def _memory_words(text: str, exclude: tuple[str, ...]) -> frozenset[str]:
    return frozenset(topic_tokens(text, exclude=exclude))


# Held per process, as whisper.text holds its texts' tokens: a text of up to TOPIC_CACHE_CHARS in the big cache, a
# longer page (imported documentation, up to tens of KB) in a cache of PAGE_CACHE_TEXTS, so that what the big cache
# holds is bounded in bytes (8,192 x 4,000 characters) rather than by the pages a store holds (session 20, rss1:
# the dev stores' keys went up to 41,259 characters).
memory_words = byte_lru(maxsize=8192, max_bytes=MEMORY_WORDS_BYTES, cost=args_cost)(_memory_words)
_page_memory_words = byte_lru(maxsize=PAGE_CACHE_TEXTS, max_bytes=PAGE_MEMORY_WORDS_BYTES, cost=args_cost)(
    _memory_words)


def candidate_words(text: str, exclude: tuple[str, ...]) -> frozenset[str]:
    """A candidate's words for the overlap check (`topic_tokens` less `exclude`): a pure function of the text, and
    the same memory's text comes back call after call (and a store's space names as `exclude`), so they are computed
    once per text, not once per candidate and call."""
    return (memory_words if len(text) <= TOPIC_CACHE_CHARS else _page_memory_words)(text, exclude)


@byte_lru(maxsize=1024, max_bytes=SPACE_WORDS_BYTES, cost=args_cost)
def _space_words(spaces: str) -> frozenset[str]:
    return frozenset(topic_tokens(spaces))


def _identity_only(run: WhisperRun) -> bool:
    return run.intent is not None and run.intent.only == IDENTITY


def rerank(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Blend the cross-encoder's absolute score into the ordering score (skipped for identity-only prompts)."""
    if deps.reranker is None or _identity_only(run) or not run.pool:
        return None
    docs = [f"{c.title}: {c.content[: conf.reranker_max_doc_chars]}" if c.title else c.content[
        : conf.reranker_max_doc_chars] for c in run.pool]
    try:
        raw = deps.reranker.score(run.query or run.prompt, docs)
    except Exception:  # noqa: BLE001
        # Trigger: the cross-encoder failed at run time. Why: whisper must answer anyway.
        # Outcome: logged; this call gates on cosine with the no-reranker gate.
        logger.exception("Reranker failed; whisper continues on embeddings for this prompt")
        return None
    for cand, score in zip(run.pool, raw):
        cand.ce_raw = round(float(score), 4)
        cand.ce_abs = round(ce_absolute(float(score)), 4)
        cand.score = conf.reranker_blend * cand.ce_abs + (1.0 - conf.reranker_blend) * cand.score
    run.reranked = True
    return None


def boost(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Add the affinity boost from past feedback in similar contexts; after a rerank, apply the post-rerank floor."""
    if run.prompt_vec is not None and run.pool:
        samples = deps.feedback([c.node_id for c in run.pool])
        params = AffinityParams(conf.affinity_similarity, conf.affinity_half_life_days, conf.affinity_max_boost,
                                conf.affinity_implicit_weight)
        for cand in run.pool:
            cand.affinity = affinity_boost(run.prompt_vec, samples.get(cand.node_id, ()), now=run.now, params=params)
            cand.score += cand.affinity
    if run.reranked:
        run.drop([c for c in run.pool if c.score >= conf.reranker_min_score], STAGE_POST_FLOOR)
        if not run.pool:
            return SILENT_BELOW_FLOOR
    return None


def identity_space(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """For identity-only prompts, global memories win over project ones when there are any."""
    if _identity_only(run) and any(c.space is None for c in run.pool):
        run.drop([c for c in run.pool if c.space is None], STAGE_SPACE)
    return None


def topical_overlap(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Fail-closed precision filter: a candidate needs a distinctive word in common with the query (in its title,
    text or tags), or a reason.

    Reasons: it is identity-linked; the prompt is identity-only and it is global; the prompt is a follow-up and
    nothing overlapped at all; or its absolute signal is strong (cross-encoder, else raw cosine).
    """
    if not run.pool:
        return None
    current = [run.request.space] if run.request.space else []
    wanted = topic_tokens(run.query or run.prompt, exclude=current)
    # On a question about the user, an identity memory holding the kind of fact a general word asks for shares it
    # ("what's my job?" and "Works at …"; whisper.lexicon).
    personal = run.identity_question or (run.intent is not None and run.intent.has(IDENTITY))
    facts = question_facts(run.query or run.prompt) if personal else set()
    for cand in run.pool:
        # A project's own name is not a topic: "how does shopfront sign users in?" must match on "sign users".
        exclude = current + ([cand.space] if cand.space else [])
        labels = (cand.title, *(cand.hit.tags if cand.hit is not None else ()))  # tags name its subject too
        text = " ".join((cand.content, *labels))
        cand.overlap = bool((wanted - _space_words(" ".join(exclude))) & candidate_words(text, tuple(exclude))) or bool(
            facts and cand.identity and facts & named_facts(cand.content, labels))
    any_overlap = any(c.overlap for c in run.pool)

    def passes(c) -> bool:
        if c.overlap or c.identity:
            return True
        if c.probability is not None and c.ce_abs is None and c.probability >= conf.gate_no_reranker:
            return True  # the scorer already weighed the words the memory shares with the query
        if _identity_only(run) and c.space is None:
            return True
        if run.follow_up and not any_overlap:
            return True
        if c.ce_abs is not None:
            return c.ce_abs >= conf.overlap_ce_floor
        if c.raw_cosine is not None:
            return c.raw_cosine >= conf.overlap_cosine_floor
        return not any_overlap

    standout = standing(run, conf, deps, [c for c in run.pool if not passes(c)])
    run.drop([c for c in run.pool if passes(c) or c is standout], STAGE_OVERLAP)
    return None if run.pool else SILENT_NO_OVERLAP


def standing(run: WhisperRun, conf: WhisperConf, deps: Deps, dropped: list[Candidate]) -> Candidate | None:
    """The call's nearest recall hit, when the overlap filter would drop it (no word shared, cosine under the floor)
    and its cosine stands `conf.overlap_z` standard deviations or more over the prompt's cosines to every memory in
    scope (`deps.spread`, from the vector matrix's scan of the query): how far the memory stands out for this
    prompt, not how near it is. Its `standing` is set (the gate passes it: whisper.stages.gate.injection_gate).
    Session 19 (docs/benchmarks.md, "Whisper pool, session 19"): separates right from wrong hits better than the
    cosine in every dev batch (bench/whisper_gate_para.py); a paraphrase shares no word with its answer."""
    hits = [c for c in run.pool if c.probability is not None and c.ce_abs is None and c.raw_cosine is not None]
    if not hits or run.query_vec is None or not math.isfinite(conf.overlap_z):
        return None
    best = max(hits, key=lambda c: c.raw_cosine)
    if best not in dropped:
        return None
    found = deps.spread(run.query_vec)
    if found is None or found[1] <= 0.0:
        return None
    z = (best.raw_cosine - found[0]) / found[1]
    if z < conf.overlap_z:
        return None
    best.standing = round(z, 3)
    return best
