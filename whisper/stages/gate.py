"""The injection gate on absolute signals, the optional exploration slot, ordering and the cap."""

from __future__ import annotations

import math

from memory.domain.enums import NodeType
from memory.domain.requests import auto_title
from memory.ranking.features import query_terms, stems
from whisper.affinity import has_similar
from whisper.asked import asks
from whisper.classifier import IDENTITY
from whisper.conf import WhisperConf
from whisper.conventions import standout_gate
from whisper.evidence import memory_cover, thing_evidence
from whisper.kinds import SCAN_CHARS
from whisper.stages.retrieve import PAGE_CHARS
from whisper.state import (
    SILENT_BELOW_GATE, SILENT_TOPIC_REPEAT, STAGE_CANDIDATE, STAGE_CAP, STAGE_GATE, STAGE_SERVED, Candidate, Deps,
    WhisperRun,
)
from whisper.text import topic_tokens

EXPLORATION_MIN_CE_RAW = -8.0
LONG_PROMPT_WORDS = 10  # the `prompt_words` input counts the words past these (ln(1 + n) - ln(1 + 10), 0 below)


def gate_score(cand: Candidate, *, by_cosine: bool = False) -> float:
    """g = recall's calibrated probability of relevance + affinity (the scorer already weighs confidence and the
    project); with a reranker, g = cross-encoder absolute × (0.4 + 0.6·confidence) × space factor + affinity; an
    identity memory judged on cosine (below): its raw cosine, the same way. The blended score orders; g decides.
    """
    if cand.ce_abs is None and cand.probability is not None and not by_cosine:
        return round(cand.probability + cand.affinity, 4)
    base = cand.ce_abs if cand.ce_abs is not None else cand.raw_cosine
    if base is None:
        return round(cand.score, 4)
    return round(base * (0.4 + 0.6 * cand.confidence) * cand.space_factor + cand.affinity, 4)


GATE_INPUTS = ("g", "cosine", "best", "margin", "own_titled", "overview", "thing_missing", "memory_cover",
               "prompt_words")


def own_titled(cand: Candidate, run: WhisperRun) -> float:
    """1 for a note (not a page) of the prompt's project whose title shares a distinctive word with the prompt (its
    project's name aside, as the overlap filter reads words): the project's own record of what the prompt is about
    ("Integration tests" for "run the integration tests for me"), not a note that is merely near it (the project's
    overview for "what's the Grafana dashboard URL"). Only a title the writer gave counts: one cut from the note's
    first line (`auto_title`) names no topic ("Every Ormah write takes a thread lock …" is not about file locking on
    NFS). Tokenizes the prompt and a title: no statement."""
    hit = cand.hit
    if run.target_space is None or cand.space != run.target_space or hit is None or len(hit.content) > PAGE_CHARS:
        return 0.0
    title = (hit.title or "").strip()
    if not title or title == auto_title(hit.content):
        return 0.0
    exclude = [s for s in (run.request.space, cand.space) if s]
    return float(bool(topic_tokens(run.query or run.prompt, exclude=exclude) & topic_tokens(title, exclude=exclude)))


def logistic_hits(run: WhisperRun) -> list[Candidate]:
    """The candidates the logistic gate judges: recall's hits (no cross-encoder) outside the identity route."""
    return [c for c in run.pool if c.probability is not None and c.ce_abs is None and not identity_route(c, run)]


def gate_inputs(run: WhisperRun, hits: list[Candidate], deps: Deps | None = None) -> dict[int, list[float]]:
    """The logistic gate's inputs per hit (id -> values in GATE_INPUTS order): g = probability + affinity, raw
    cosine, 1 if best by g, g - the next g (a lone hit: its g), `own_titled`, and 1 for a project's overview (type
    `project`: near every prompt of its project, so its probability and cosine overstate how well it answers one);
    then the answer evidence of `evidence_inputs` and ln(1 + the prompt's words) (session 18: a long prompt, a task
    with its context or pasted text, puts the right memory at a lower probability and cosine than a short question
    does). The gaps of g and cosine to the best hit were inputs
    until session 12: left out, the grouped estimate did not move (bench/whisper_gate_study.py)."""
    g = {id(c): c.probability + c.affinity for c in hits}
    ranked = sorted(g.values(), reverse=True)
    evidence = evidence_inputs(run, hits, deps)
    words = max(0.0, math.log1p(len(run.prompt.split())) - math.log1p(LONG_PROMPT_WORDS))
    out = {}
    for c in hits:
        rank = ranked.index(g[id(c)])
        nxt = ranked[rank + 1] if rank + 1 < len(ranked) else 0.0
        out[id(c)] = [g[id(c)], c.raw_cosine or 0.0, float(rank == 0), g[id(c)] - nxt, own_titled(c, run),
                      float(c.type == NodeType.PROJECT), *evidence[id(c)], words]
    return out


def evidence_inputs(run: WhisperRun, hits: list[Candidate], deps: Deps | None) -> dict[int, tuple[float, float]]:
    """Per hit, what it holds of what the prompt asks, apart from how near it is (whisper.evidence; docs/whisper.md,
    "Answer evidence at the gate"): 1 when a "which / what X" question names a thing the memory never names
    (`thing_evidence` -1: "which notary …" beside a note on changing the bylaws), and the IDF-weighted share of the
    memory's words (its title and the first SCAN_CHARS characters) that the prompt names (`memory_cover`; IDF from
    recall's document counts, `deps.idf`: without it, 0). No model call: one read of the document counts of the
    hits' words, kept per process for the store state."""
    texts = {id(c): f"{c.title or ''}\n{c.hit.content if c.hit is not None else c.content}" for c in hits}
    words = {k: frozenset(stems(t[:SCAN_CHARS])) for k, t in texts.items()}
    weights = deps.idf(sorted(set().union(*words.values()))) if deps is not None and words else {}
    asked = query_terms(run.prompt)
    return {id(c): (float(thing_evidence(run.prompt, title=c.title or "", content=texts[id(c)]) < 0),
                    memory_cover(asked, words[id(c)], weights, top=len(words[id(c)])))
            for c in hits}


def apply_logistic(run: WhisperRun, conf: WhisperConf, deps: Deps | None = None) -> None:
    """Replace recall hits' gate score by the logistic gate's log-odds (bench/whisper_gate_fit.py) and their gate
    by `gate_logit`; identity-route memories and memories recall did not return keep their own gates."""
    hits = logistic_hits(run)
    bias, *weights = conf.gate_weights
    inputs = gate_inputs(run, hits, deps)
    for c in hits:
        c.gate_score = round(bias + sum(w * f for w, f in zip(weights, inputs[id(c)])), 4)
        c.gate_threshold = conf.gate_logit


def threshold_for(cand: Candidate, run: WhisperRun, conf: WhisperConf) -> float:
    """The gate a candidate must reach.

    Identity memories on an identity prompt about the user that shares a distinctive word with them face the identity gate on
    cosine: "what's my name?" is far from "The user's name is …" in embedding space and in the scorer's eyes.
    Other identity memories recall did not return need a strong cosine; recall's hits face the probability gate.
    """
    if cand.ce_abs is not None:
        return conf.gate
    if identity_route(cand, run):
        return conf.identity_gate if cand.overlap else conf.identity_gate_no_word
    if cand.probability is None:
        return conf.overlap_cosine_floor
    return conf.gate_no_reranker


def identity_route(cand: Candidate, run: WhisperRun) -> bool:
    """An identity memory on an identity prompt about the user: judged on cosine, against the identity gate when
    it shares a word with the prompt, else a higher one ("what do I do for a living" shares no word with "Works
    at Kestrel Freight"). (Any first-person prompt is about the user; "I'm back, had to walk the dog" is not
    asking who the user is.)"""
    return cand.ce_abs is None and cand.identity and run.about_user and _identity_question(run)


def _identity_question(run: WhisperRun) -> bool:
    """Identity intent, or a short question about a fact of the user's own (build_query)."""
    return run.identity_question or (run.intent is not None and run.intent.has(IDENTITY))


def _best_identity_only(run: WhisperRun, conf: WhisperConf) -> list[Candidate]:
    """The pool without identity-route memories below `gate_relative` x the best one's cosine: "where do I live"
    wants where the user lives, not every fact about the user above the identity gate."""
    best = max((c.gate_score for c in run.pool if identity_route(c, run)), default=0.0)
    # A short question about one fact of the user's ("where am I from?", found by the text rule, not the intent
    # archetypes) or a preference task wants that one fact: only a close second stays beside the best.
    share = conf.gate_relative if run.intent is not None and run.intent.has(IDENTITY) else conf.identity_fact_share
    return [c for c in run.pool if not identity_route(c, run) or c.gate_score >= share * best]


def _follow_up_answer(run: WhisperRun, conf: WhisperConf, deps: Deps) -> None:
    """On a follow-up question whose hits hold a memory this session was already served (the conversation's topic,
    in the agent's context), the hit not yet served that matches both the conversation (cosine to the joined query)
    and what the prompt itself asks (cosine to the prompt alone) best is judged on the smaller of the two cosines
    times its space factor against `follow_up_cosine` ("and what does he eat?" after "when did we adopt Biscuit?":
    the food memory). The logistic gate measures it against the served memory and on the joined query's
    probability, which is the topic's, not the question's.

    Session 15 (docs/whisper.md, "The follow-up route on fresh batches"): a raw cosine knows no project, so another
    project's memory counts at its space factor, as on the identity and preference routes ("and who signs off on
    the schema?" in one project is not answered by another project's README); and a follow-up that asks nothing
    ("ok, calling them now") has no question for the prompt-alone cosine to answer, so the route is not taken."""
    if (not run.follow_up or run.prompt_vec is None or run.query_vec is None or not run.request.session_id
            or not asks(run.prompt)):
        return
    hits = [c for c in logistic_hits(run) if c.hit is not None]
    served = deps.served()
    fresh = [c for c in hits if c.node_id not in served]
    if not fresh or len(fresh) == len(hits):
        return
    rows = [c.hit.row_id for c in fresh]
    alone, joined = deps.cosines(run.prompt_vec, rows), deps.cosines(run.query_vec, rows)
    both = {id(c): min(alone.get(c.hit.row_id, 0.0), joined.get(c.hit.row_id, 0.0)) * c.space_factor for c in fresh}
    best = max(fresh, key=lambda c: both[id(c)])
    if both[id(best)] >= conf.follow_up_cosine and best.gate_score < best.gate_threshold:
        best.gate_score, best.gate_threshold = round(both[id(best)], 4), conf.follow_up_cosine


def _standing_gate(run: WhisperRun, conf: WhisperConf) -> None:
    """A hit the overlap filter let through on its standing (whisper.stages.scoring.standing) passes whatever the
    logistic gate said: its gate score becomes its standing, its threshold conf.overlap_z, so the ledger shows why.
    The logistic gate was fitted on hits that share a word with the prompt; this one shares none."""
    kept = {id(c) for c in run.pool}
    for cand in run.candidates:
        if cand.standing is None or cand.stage != STAGE_GATE or id(cand) in kept:
            continue
        cand.gate_score, cand.gate_threshold = cand.standing, conf.overlap_z
        cand.stage = STAGE_CANDIDATE
        run.pool.append(cand)


def injection_gate(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Keep candidates whose gate score reaches their gate. Without a reranker recall's hits face the logistic gate
    (conf.gate_weights: the log-odds of being right from probability, cosine, being the best and the margin over the
    next, own_titled and overview, against gate_logit); with the weights off, their raw cosine must reach the cosine
    floor and their probability be within `gate_relative` of the best, or the cosine alone reach the overlap
    filter's 0.70. Silence when none passes."""
    run.gate = conf.gate if run.reranked else conf.gate_no_reranker
    for cand in run.pool:
        cand.gate_score = gate_score(cand, by_cosine=identity_route(cand, run))
        cand.gate_threshold = threshold_for(cand, run, conf)
    if conf.gate_weights and not run.reranked:
        run.gate = conf.gate_logit
        apply_logistic(run, conf, deps)

        # No strong-cosine pass here: the gate weighs the cosine itself, and a near miss on a stored topic ("when is
        # 1.1 planned" beside "1.0 released") reaches 0.70 as easily as an answer (bench/whisper_gate_study.py).
        _follow_up_answer(run, conf, deps)
        run.drop([c for c in run.pool if c.gate_score >= c.gate_threshold], STAGE_GATE)
        run.drop(_best_identity_only(run, conf), STAGE_GATE)
        standout_gate(run, conf)  # a convention the task needs passes on its standout (whisper.conventions)
        _standing_gate(run, conf)
        return None if run.pool else SILENT_BELOW_GATE
    best = max((c.gate_score for c in run.pool if c.probability is not None and not identity_route(c, run)),
               default=0.0)

    def passes(c: Candidate) -> bool:
        if c.probability is not None and c.ce_abs is None and (c.raw_cosine or 0.0) >= conf.overlap_cosine_floor:
            return True  # a strong cosine on its own: the scorer's probability runs low in a store of a few memories
        if c.gate_score < c.gate_threshold:
            return False
        if c.probability is None or c.ce_abs is not None or identity_route(c, run):
            return True
        return (c.raw_cosine or 0.0) >= conf.gate_min_cosine and c.gate_score >= conf.gate_relative * best

    run.drop([c for c in run.pool if passes(c)], STAGE_GATE)
    return None if run.pool else SILENT_BELOW_GATE


def already_served(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Drop memories this session was whispered within the gap (still in the agent's context); silence if none left."""
    if not run.pool or not run.request.session_id:
        return None
    served = deps.served()
    if served:
        run.drop([c for c in run.pool if c.node_id not in served], STAGE_SERVED)
    return None if run.pool else SILENT_TOPIC_REPEAT


def exploration(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Optionally add one gated-out candidate, marked [exploring], to learn from feedback (never on silence)."""
    if not conf.exploration or not run.pool or run.prompt_vec is None:
        return None
    rejected = sorted((c for c in run.candidates if c.stage == STAGE_GATE), key=lambda c: -c.score)
    if not rejected:
        return None
    samples = deps.feedback([c.node_id for c in rejected])
    for cand in rejected:
        if cand.ce_raw is not None and cand.ce_raw < EXPLORATION_MIN_CE_RAW:
            continue
        if has_similar(run.prompt_vec, samples.get(cand.node_id, ()), similarity=conf.affinity_similarity):
            continue
        cand.exploration = True
        run.pool.append(cand)
        return None
    return None


def arrange(run: WhisperRun, conf: WhisperConf, deps: Deps) -> str | None:
    """Order by score, recall's hits before identity memories it did not return (their cosine is another scale);
    exploration last; cap at max_nodes."""
    main = [c for c in run.pool if not c.exploration]
    extra = [c for c in run.pool if c.exploration]
    main.sort(key=lambda c: (c.probability is None and c.ce_abs is None, -c.score))  # recall's hits first
    ordered = main + extra
    run.drop(ordered[: conf.max_nodes], STAGE_CAP)
    run.pool = ordered[: conf.max_nodes]
    return None
