"""The whisper app's typed, frozen configuration, built from settings.ORMAH["WHISPER_*"].

Pure code (stages, classifier, formatter, affinity) receives this object; only `get_conf` reads settings.
Defaults and their calibration are documented in docs/whisper.md.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from django.conf import settings

from memory.ranking import thresholds
from memory.ranking.scorer import pinned_for


# The logistic gate on recall's hits (bench/whisper_gate_fit.py, fitted on the dev split's candidates): bias, then
# weights of g (probability + affinity), raw cosine, "best by g", g margin over the next hit, "a note of the prompt's
# project titled with a word of the prompt" (own_titled), "a project's overview" (overview). A hit is whispered when
# the log-odds reach GATE_LOGIT. The grouped estimate (left out by batch and by store) put the point for the targets
# (precision 0.9, silence 0.95) at 0.80; the lead kept 0.40 (docs/whisper.md, "The logistic gate": at 0.80 an exact
# answer on a store of a few notes stays silent, and on dev 0.40 beats the session's start on all three figures).
# Session 18 added three inputs that are not nearness (whisper.stages.gate.evidence_inputs): thing_missing,
# memory_cover, prompt_words; the six weights stay, the bias and the three were fitted on top of them on dev batches
# 1-8, and 0.30 is the highest dev 1-8 hit rate (the fit's replay on main 872ee12) whose precision and silence are at
# least the old gate's at 0.40 (docs/whisper.md, "Answer evidence and the prompt's length at the gate").
# 0.30 -> 0.33 (gate5): the same rule on real dev 1-8 runs of main 1967514: four wrong memories and no answer lay
# between them (docs/whisper.md, "The gate's threshold by route counts").
# Session 24 (gate9): refitted on dev 1-14 (L2 1) with own_titled dropped (weight 0: the input whose removal lowers the
# left-out-by-store log-loss most), threshold -0.40 by the most right prompts on the batches' left-out log-odds; kept
# by the rule of docs/benchmarks.md "Whisper gate, session 24" (left out by batch +12 right prompts on dev 1-14, by
# store +1, batch 15 dev 30 -> 35 right). own_titled is still computed and dumped for later fits.
GATE_WEIGHTS = (-4.518, 0.753, 4.706, 1.082, 0.666, 0.000, -0.863, -0.225, 3.768, 1.141)
GATE_LOGIT = -0.40


@dataclass(frozen=True, slots=True)
class WhisperConf:
    enabled: bool = True
    search_limit: int = 6
    max_nodes: int = 2
    min_score: float = 0.05  # probability floor before the gate (get_conf: the scorer file's recall_floor)
    activation: bool = False
    budget_tokens: int = 300
    content_max_chars: int = 600
    full_items: int = 2
    reranker: str | None = None
    reranker_model: str = "Xenova/ms-marco-MiniLM-L-6-v2"
    reranker_min_score: float = 0.40
    reranker_blend: float = 0.6
    reranker_max_doc_chars: int = 512
    gate: float = 0.45
    gate_no_reranker: float = 0.65  # gate on the probability (get_conf: the scorer file's whisper_gate)
    gate_min_cosine: float = 0.35  # and its raw cosine at least this (guards against keyword-only matches)
    gate_relative: float = 0.7  # also keep only candidates at or above this share of the best one's probability
    gate_weights: tuple[float, ...] = GATE_WEIGHTS  # the logistic gate; () falls back to the three rules above
    gate_logit: float = GATE_LOGIT
    project_pass: bool = True  # a second recall over the prompt's project and the global memories (retrieve)
    identity_gate: float = 0.25
    identity_gate_no_word: float = 0.35  # the identity gate for an identity memory sharing no word with the prompt
    identity_fact_share: float = 0.9  # without identity intent, identity-route memories below this x the best drop
    follow_up_cosine: float = 0.35  # a follow-up's best unserved hit: min(cosine to the joined query, to the prompt)
    # A convention a task needs (whisper.conventions): an identity memory whose cosine to the task stands this many
    # leave-one-out standard deviations over the rest of the identity set, with at least this raw cosine, measured
    # only on a set of at least standout_min_set memories.
    standout_z: float = 4.5  # 5.6 until session 23 (bench.whisper_identity choose: left out by batch and by store)
    standout_min_cosine: float = 0.25
    standout_min_set: int = 8
    overlap_ce_floor: float = 0.45
    overlap_cosine_floor: float = 0.70
    # A call's nearest recall hit sharing no word passes the overlap filter and the gate when its cosine stands this
    # many standard deviations over the prompt's cosines to every memory in scope (whisper.stages.scoring.standing).
    overlap_z: float = 5.0
    intent_threshold: float = 0.65
    buffer_size: int = 5
    session_gap_minutes: float = 10.0
    exploration: bool = False
    synthetic_patterns: tuple[re.Pattern, ...] = field(default_factory=tuple)
    nudge_interval: int = 10
    store_interval: int = 10
    store_min_turns: int = 3
    store_dedup_threshold: float = 0.90
    log_retention_days: int = 30
    affinity_similarity: float = 0.70
    affinity_half_life_days: float = 30.0
    affinity_max_boost: float = 0.15
    affinity_implicit_weight: float = 0.8
    maintenance_due: str | None = None
    space_factor_other: float = 0.6


def _patterns(raw: str | None) -> tuple[re.Pattern, ...]:
    """Extra synthetic-prompt regexes, one per line (matched at the start of the left-trimmed prompt)."""
    return tuple(re.compile(line.strip(), re.IGNORECASE) for line in (raw or "").splitlines() if line.strip())


def parse_gate_weights(raw: str | None) -> tuple[float, ...]:
    """WHISPER_GATE_WEIGHTS: unset for the fitted weights, "off" for the probability gate, else as many finite
    numbers as GATE_WEIGHTS holds (a NaN or infinite weight would make every log-odds NaN and silence every call)."""
    if raw is None or not str(raw).strip():
        return GATE_WEIGHTS
    if str(raw).strip().lower() == "off":
        return ()
    try:
        values = tuple(float(v) for v in str(raw).replace(",", " ").split())
    except ValueError:
        values = ()
    if len(values) != len(GATE_WEIGHTS) or not all(math.isfinite(v) for v in values):
        # whisper.checks reports this at start (whisper.E001), so a stale setting does not silence every call.
        raise ValueError(f"WHISPER_GATE_WEIGHTS needs {len(GATE_WEIGHTS)} finite numbers or 'off', got {raw!r}")
    return values


# The last conf built, with what it was built from (a copy of settings.ORMAH and the two calibrated thresholds): one
# entry, replaced when either differs.
_built: tuple[dict, float, float, WhisperConf] | None = None


def get_conf() -> WhisperConf:
    """The conf of the current settings.ORMAH and scorer file: built again whenever the settings differ from the ones
    the last conf was built from (an override_settings, a key set in place) or a calibrated threshold does, else that
    conf (building it took ~22 us a whisper, the comparison ~5 us: docs/benchmarks.md "Served CPU, session 26")."""
    global _built
    o = settings.ORMAH
    min_score = _calibrated(o, "MIN_SCORE", "recall_floor")
    gate_no_reranker = _calibrated(o, "GATE_NO_RERANKER", "whisper_gate")
    built = _built
    if built is not None and built[1] == min_score and built[2] == gate_no_reranker and built[0] == o:
        return built[3]
    conf = _build(o, min_score, gate_no_reranker)
    _built = (dict(o), min_score, gate_no_reranker, conf)
    return conf


def _calibrated(o, key: str, threshold: str) -> float:
    """A probability threshold: the setting when given, else the value in the scorer file whisper pins."""
    value = o.get(f"WHISPER_{key}")
    if value is not None:
        return float(value)
    with pinned_for("whisper"):
        return thresholds.threshold(threshold)


def _build(o, min_score: float, gate_no_reranker: float) -> WhisperConf:
    d = WhisperConf()

    def pick(key: str, default):
        value = o.get(f"WHISPER_{key}")
        return default if value is None else type(default)(value)

    return WhisperConf(
        enabled=pick("ENABLED", d.enabled),
        search_limit=pick("SEARCH_LIMIT", d.search_limit),
        max_nodes=pick("MAX_NODES", d.max_nodes),
        min_score=min_score,
        activation=pick("ACTIVATION", d.activation),
        budget_tokens=pick("BUDGET_TOKENS", d.budget_tokens),
        content_max_chars=pick("CONTENT_MAX_CHARS", d.content_max_chars),
        full_items=pick("FULL_ITEMS", d.full_items),
        reranker=o.get("WHISPER_RERANKER") or None,
        reranker_model=pick("RERANKER_MODEL", d.reranker_model),
        reranker_min_score=pick("RERANKER_MIN_SCORE", d.reranker_min_score),
        reranker_blend=pick("RERANKER_BLEND", d.reranker_blend),
        gate=pick("GATE", d.gate),
        gate_no_reranker=gate_no_reranker,
        gate_min_cosine=pick("GATE_MIN_COSINE", d.gate_min_cosine),
        gate_relative=pick("GATE_RELATIVE", d.gate_relative),
        gate_weights=parse_gate_weights(o.get("WHISPER_GATE_WEIGHTS")),
        gate_logit=pick("GATE_LOGIT", d.gate_logit),
        project_pass=pick("PROJECT_PASS", d.project_pass),
        identity_gate=pick("IDENTITY_GATE", d.identity_gate),
        identity_gate_no_word=pick("IDENTITY_GATE_NO_WORD", d.identity_gate_no_word),
        follow_up_cosine=pick("FOLLOW_UP_COSINE", d.follow_up_cosine),
        standout_z=pick("STANDOUT_Z", d.standout_z),
        standout_min_cosine=pick("STANDOUT_MIN_COSINE", d.standout_min_cosine),
        standout_min_set=pick("STANDOUT_MIN_SET", d.standout_min_set),
        overlap_ce_floor=pick("OVERLAP_CE_FLOOR", d.overlap_ce_floor),
        overlap_cosine_floor=pick("OVERLAP_COSINE_FLOOR", d.overlap_cosine_floor),
        overlap_z=pick("OVERLAP_Z", d.overlap_z),
        intent_threshold=pick("INTENT_THRESHOLD", d.intent_threshold),
        buffer_size=pick("BUFFER_SIZE", d.buffer_size),
        session_gap_minutes=pick("SESSION_GAP_MINUTES", d.session_gap_minutes),
        exploration=pick("EXPLORATION", d.exploration),
        synthetic_patterns=_patterns(o.get("WHISPER_SYNTHETIC_PATTERNS")),
        nudge_interval=pick("NUDGE_INTERVAL", d.nudge_interval),
        store_interval=pick("STORE_INTERVAL", d.store_interval),
        store_min_turns=pick("STORE_MIN_TURNS", d.store_min_turns),
        store_dedup_threshold=pick("STORE_DEDUP_THRESHOLD", d.store_dedup_threshold),
        log_retention_days=pick("LOG_RETENTION_DAYS", d.log_retention_days),
        affinity_similarity=pick("AFFINITY_SIMILARITY", d.affinity_similarity),
        affinity_half_life_days=pick("AFFINITY_HALF_LIFE_DAYS", d.affinity_half_life_days),
        affinity_max_boost=pick("AFFINITY_MAX_BOOST", d.affinity_max_boost),
        affinity_implicit_weight=pick("AFFINITY_IMPLICIT_WEIGHT", d.affinity_implicit_weight),
        maintenance_due=o.get("WHISPER_MAINTENANCE_DUE") or None,
    )
