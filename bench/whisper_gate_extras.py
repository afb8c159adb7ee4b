"""Candidate gate inputs beside whisper.stages.gate.GATE_INPUTS for bench/whisper_gate_fit.py `--inputs` (dev only;
measured, not kept: docs/benchmarks.md). Each is a function of a dumped hit and its call. The vocabulary inputs
(`unknown_all`, ...) read the document counts of the prompt's words per space that
bench.whisper_stores.prompt_vocabulary put in the dump, and the words the candidate holds."""

from __future__ import annotations

import math

LONG_CHARS = 1000.0


def _long(c: dict, call: list[dict]) -> float:
    return max(0.0, math.log(max(c.get("chars", 0), 1) / LONG_CHARS))


def _best_short(c: dict, call: list[dict]) -> float:
    """1 for the best hit by g among the memories that are not long (a note beside imported pages)."""
    short = [d for d in call if d["route"] == "logistic" and _long(d, call) == 0.0]
    return float(_long(c, call) == 0.0 and max(short, key=lambda d: d["inputs"][0]) is c)


def _short_margin(c: dict, call: list[dict]) -> float:
    """A short memory's g minus the best g among the other short memories (0 for a long one)."""
    if _long(c, call) > 0.0:
        return 0.0
    rest = [d["inputs"][0] for d in call if d["route"] == "logistic" and d is not c and _long(d, call) == 0.0]
    return c["inputs"][0] - max(rest, default=0.0)


def _scope(c: dict, scope: str) -> tuple[dict[str, int], int]:
    """Document counts of the prompt's words and the number of memories in a scope: "all" (the whole store),
    "project" (the prompt's project) or "project_global" (it and the global memories); outside a project, all."""
    v = c.get("vocabulary") or {"sizes": {}, "counts": {}}
    target = c.get("target")
    spaces = None if scope == "all" or target is None else {target} | ({""} if scope == "project_global" else set())
    total = sum(n for s, n in v["sizes"].items() if spaces is None or s in spaces)
    return {t: sum(n for s, n in by.items() if spaces is None or s in spaces) for t, by in v["counts"].items()}, total


def _idf(df: int, total: int) -> float:
    return math.log(1 + (total - df + 0.5) / (df + 0.5))


def _unknown(scope: str, weighted: bool = True):
    """The (IDF-weighted) share of the prompt's content words that no memory of the scope holds."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        w = {t: _idf(n, total) if weighted else 1.0 for t, n in df.items()}
        return sum(w[t] for t, n in df.items() if n == 0) / sum(w.values()) if w else 0.0
    return f


def _cover(scope: str):
    """The IDF-weighted share of the prompt's content words the candidate holds (IDF in the scope)."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        w = {t: _idf(n, total) for t, n in df.items()}
        return sum(w[t] for t in c.get("terms", ()) if t in w) / sum(w.values()) if w else 0.0
    return f


def _rare_lack(scope: str, known: bool):
    """The highest IDF (over the top IDF of the scope) of a prompt word the candidate lacks; `known`: only words
    the scope holds (another memory has it), else only words it lacks too (nothing stored has it)."""
    def f(c: dict, call: list[dict]) -> float:
        df, total = _scope(c, scope)
        lacking = [_idf(n, total) for t, n in df.items() if t not in c.get("terms", ()) and (n > 0) == known]
        return max(lacking, default=0.0) / _idf(0, max(total, 1))
    return f


VOCABULARY = {}
for _s in ("all", "project", "project_global"):
    VOCABULARY |= {f"unknown_{_s}": _unknown(_s), f"unknown_n_{_s}": _unknown(_s, weighted=False),
                   f"cover_{_s}": _cover(_s), f"lack_known_{_s}": _rare_lack(_s, True),
                   f"lack_unknown_{_s}": _rare_lack(_s, False)}


def _spread(c: dict, key: str) -> float:
    return (c.get("spread") or {}).get(key, 0.0)


def _hits_z(c: dict, call: list[dict]) -> float:
    """The candidate's cosine as a z-score over the cosines of recall's hits for this call (std floored at 0.05)."""
    hits = (c.get("spread") or {}).get("hits") or [c["cosine"]]
    mean = sum(hits) / len(hits)
    std = math.sqrt(sum((h - mean) ** 2 for h in hits) / len(hits))
    return (c["cosine"] - mean) / max(std, 0.05)


def _store_z(c: dict, call: list[dict]) -> float:
    """The candidate's cosine as a z-score over the query's cosines to every memory of the store."""
    return (c["cosine"] - _spread(c, "mean")) / max(_spread(c, "std"), 0.02)


def _hub(c: dict, key: str) -> float:
    return (c.get("hub") or {}).get(key, 0.0)


# Inputs that put the raw MiniLM cosine on a scale that means the same for every prompt and memory (session 13):
# relative to the prompt's cosines over the store or recall's hits, and less the memory's hubness (CSLS-style).
SHAPE = {
    "cos_rel5": lambda c, call: c["cosine"] - _spread(c, "top5"),  # over the mean of the prompt's 5 nearest
    "cos_rel10": lambda c, call: c["cosine"] - _spread(c, "top10"),
    "cos_rel54": lambda c, call: c["cosine"] - _spread(c, "top54"),  # recall's vector leg pool (6 x 9)
    "cos_med": lambda c, call: c["cosine"] - _spread(c, "median"),
    "cos_zs": _store_z,
    "cos_z6": _hits_z,
    "cos_m6": lambda c, call: c["cosine"] - sum((c.get("spread") or {}).get("hits") or [c["cosine"]]) / len(
        (c.get("spread") or {}).get("hits") or [c["cosine"]]),
    "prompt_top10": lambda c, call: _spread(c, "top10"),  # how near anything stored the prompt is
    "hub10": lambda c, call: _hub(c, "k10"),
    "hub5": lambda c, call: _hub(c, "k5"),
    "hub_all": lambda c, call: _hub(c, "all"),
    "cos_hub10": lambda c, call: c["cosine"] - _hub(c, "k10"),
    "csls10": lambda c, call: 2 * c["cosine"] - _spread(c, "top10") - _hub(c, "k10"),
    "csls5": lambda c, call: 2 * c["cosine"] - _spread(c, "top5") - _hub(c, "k5"),
}


EXTRAS = {
    "long": _long,  # ln(characters / 1000), 0 below: imported pages, not notes
    "passage": lambda c, call: float(bool(c.get("passage"))),  # represented by the passage that matched
    "other_space": lambda c, call: float(c.get("target") is not None and c["space"] not in (None, c["target"])),
    "same_space": lambda c, call: float(c.get("target") is not None and c["space"] == c["target"]),
    "best_short": _best_short,
    "is_long": lambda c, call: float(c.get("chars", 0) > LONG_CHARS),
    "long_cos": lambda c, call: float(c.get("chars", 0) > LONG_CHARS) * c["cosine"],  # pages: trust the cosine
    "long_g": lambda c, call: float(c.get("chars", 0) > LONG_CHARS) * c["g"],  # pages: their g runs high
    "long_other": lambda c, call: _long(c, call) * EXTRAS["other_space"](c, call),  # a long page of another space
    "overlap": lambda c, call: float(bool(c.get("overlap"))),  # shares a distinctive word with the prompt
    "short_margin": _short_margin,
    "follow_up": lambda c, call: float(bool(c.get("follow_up"))),  # the query joins the previous prompts
    "both_legs": lambda c, call: float(c.get("fts_rank") is not None and c.get("vector_rank") is not None),
    "fts_first": lambda c, call: float(c.get("fts_rank") == 1),
    "vector_first": lambda c, call: float(c.get("vector_rank") == 1),
    "title_overlap": lambda c, call: float(bool(c.get("title_overlap"))),  # shares a word with the title
} | VOCABULARY | SHAPE


def _seg(c: dict, key: str) -> float:
    return (c.get("seg") or {}).get(key, c["cosine"])


def _seg_best_rank(key):
    """1 for the hit with the highest `key` among the call's logistic hits."""
    def f(c: dict, call: list[dict]) -> float:
        hits = [d for d in call if d["route"] == "logistic"]
        return float(max(hits, key=lambda d: key(d)) is c)
    return f


# The prompt's segments and the memory's sentences (session 14; bench/whisper_gate_segments.py adds `seg` to a dump):
# the cosine to the question sentence(s) alone, to the prose without pasted code and logs, the best of them and the
# dump's cosine; the best cosine of the prompt / its question to any one sentence of a note of several sentences.
SEGMENTS = {
    "cos_q": lambda c, call: _seg(c, "q"),
    "cos_prose": lambda c, call: _seg(c, "prose"),
    "seg_best": lambda c, call: max(c["cosine"], _seg(c, "q"), _seg(c, "prose")),
    "seg_gain": lambda c, call: max(c["cosine"], _seg(c, "q"), _seg(c, "prose")) - c["cosine"],
    "sent": lambda c, call: _seg(c, "sent"),
    "sent_q": lambda c, call: _seg(c, "sent_q"),
    "sent_gain": lambda c, call: max(_seg(c, "sent"), _seg(c, "sent_q")) - c["cosine"],
    "all_best": lambda c, call: max(c["cosine"], _seg(c, "q"), _seg(c, "prose"), _seg(c, "sent"), _seg(c, "sent_q")),
    "best_q": _seg_best_rank(lambda d: _seg(d, "q")),
    "best_cos": _seg_best_rank(lambda d: d["cosine"]),
    "best_all": _seg_best_rank(lambda d: max(d["cosine"], _seg(d, "q"), _seg(d, "prose"), _seg(d, "sent"),
                                             _seg(d, "sent_q"))),
    "sent_best": lambda c, call: max(c["cosine"], _seg(c, "sent"), _seg(c, "sent_q")),
    "q_sent_best": lambda c, call: max(c["cosine"], _seg(c, "q"), _seg(c, "sent"), _seg(c, "sent_q")),
    "prose_sent_best": lambda c, call: max(c["cosine"], _seg(c, "prose"), _seg(c, "sent")),
}
EXTRAS |= SEGMENTS


def _logit(v: float) -> float:
    v = min(max(v, 1e-4), 1 - 1e-4)
    return math.log(v / (1 - v))


# The shape of g and the legs (session 14): recall's probability on its own log-odds scale, g and cosine for the best
# hit only, the log-odds and cosine margins, the pool's size, and where the two legs of recall ranked the memory.
SHAPE_G = {
    "g_logit": lambda c, call: _logit(c["g"]),
    "best_g": lambda c, call: c["inputs"][2] * c["g"],
    "best_cos_x": lambda c, call: c["inputs"][2] * c["cosine"],
    "margin_logit": lambda c, call: _logit(c["g"]) - max(
        [_logit(d["g"]) for d in call if d["route"] == "logistic" and d is not c and d["g"] <= c["g"]], default=-9.2),
    "n_hits": lambda c, call: float(sum(d["route"] == "logistic" for d in call)),
    "cos_margin": lambda c, call: c["cosine"] - max(
        [d["cosine"] for d in call if d["route"] == "logistic" and d is not c], default=0.0),
    "both_first": lambda c, call: float(c.get("fts_rank") == 1 and c.get("vector_rank") == 1),  # both legs agree
    "vector_rank_inv": lambda c, call: 1.0 / c["vector_rank"] if c.get("vector_rank") else 0.0,
}
EXTRAS |= SHAPE_G


def _align(c: dict, key: str) -> float:
    return (c.get("align") or {}).get(key, 0.0)


def _align_rel(key: str):
    """The hit's alignment minus the best alignment among the call's other logistic hits."""
    def f(c: dict, call: list[dict]) -> float:
        rest = [_align(d, key) for d in call if d["route"] == "logistic" and d is not c]
        return _align(c, key) - max(rest, default=0.0)
    return f


# Token alignment of the prompt and the memory (session 16; bench/whisper_gate_align.py adds `align` to a dump):
# per kind of token vector (ctx: MiniLM's contextual ones; static: its input word table; lex: the word pieces
# themselves), the IDF-weighted mean MaxSim over the query's tokens, the lowest of its three rarest tokens', the
# IDF share of its tokens without a close match, and the mean relative to the call's other hits.
ALIGN = {f"tok_{kind}{suffix}": (lambda c, call, k=f"{kind}_{stat}": _align(c, k))
         for kind in ("ctx", "static", "lex") for suffix, stat in (("", "mean"), ("_min3", "min3"), ("_lack", "lack"))}
ALIGN |= {f"tok_{kind}_rel": _align_rel(f"{kind}_mean") for kind in ("ctx", "static", "lex")}
EXTRAS |= ALIGN


def _ev(c: dict, key: str) -> float:
    return (c.get("evidence") or {}).get(key, 0.0)


# Answer evidence (session 18; bench/whisper_gate_evidence.py adds `evidence` to a dump, whisper.evidence computes
# it): whether the memory holds the kind of thing the prompt asks for (1 / -1, 0 when nothing is asked) and how much
# of the prompt's and of the memory's rare words the two share. Not nearness: the right memory below the gate and a
# near miss above it differ here if anywhere.
EVIDENCE = {f"ev_{k}": (lambda c, call, k=k: _ev(c, k)) for k in (
    "kind", "pcover", "mcover", "mcover1", "mcover3", "mcover10", "mcover15", "mcover20", "mcover40", "mcover_all",
    "mcover10s", "mcover_s", "tcover", "thing")}
EVIDENCE |= {
    "ev_kind_held": lambda c, call: float(_ev(c, "kind") > 0),
    "ev_kind_missing": lambda c, call: float(_ev(c, "kind") < 0),
    "ev_thing_missing": lambda c, call: float(_ev(c, "thing") < 0),
    "ev_kind_near": lambda c, call: _ev(c, "kind") * c["cosine"],  # the kind's evidence, by how near the memory is
}
EXTRAS |= EVIDENCE
