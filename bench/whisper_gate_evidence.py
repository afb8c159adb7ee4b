"""Answer evidence as gate inputs, offline (session 18, issue 11; dev only).

    python -m bench.whisper_stores --split dev --gate-dump /tmp/dev-gate.json
    python -m bench.whisper_gate_evidence /tmp/dev-gate.json /tmp/dev-gate-ev.json
    python -m bench.whisper_gate_evidence --compare /tmp/dev-gate-ev.json   # dev batches 1-8 (FRESH_BATCHES out)

Adds to every dumped candidate an `evidence` record (whisper.evidence) read from the memory's stored text
(bench.datasets.loader.merged_memories, by key) and the call's prompt (a history prompt for a history call):
`kind` (1: the prompt asks a kind of thing and the memory holds it, -1: it lacks it, 0: nothing asked),
`pcover` (IDF share of the prompt's words the memory holds), `mcover` / `mcover3` / `mcover10` (IDF share of the
memory's 5 / 3 / 10 rarest words the prompt names), `tcover` (IDF share of the memory's title words the prompt names).
IDF is over every memory of the home (the four stores), as recall's own. The inputs of
bench/whisper_gate_extras.py EVIDENCE read the record.

`--compare` measures each input near the gate: among the hits today's weights put between log-odds -2 and +1, the
AUC of the input alone and of the gate's log-odds fitted with and without it, left out by batch and by store
(bench/whisper_gate_fit.py's groupings), and the grouped operating point's figures.
"""

from __future__ import annotations

import json
import sys
from collections import Counter

import numpy as np

from bench.roc import roc_auc
from whisper.kinds import asked_kinds, holds_kind, scan_chars

# The two inputs the study measured and the gate did not take (AUC 0.49 and 0.52 near the gate: docs/benchmarks.md
# "Whisper gate, session 18"); the ones it took live in whisper.evidence.
KIND_HELD, KIND_NONE, KIND_MISSING = 1.0, 0.0, -1.0


def kind_evidence(prompt: str, *, title: str, content: str, content_max_chars: int = 0) -> float:
    """1 when the prompt asks for a kind of thing (a time, number, count, amount, URL, person, place) and the memory's
    title and content (as far as whisper renders them, `whisper.kinds.scan_chars`) hold every kind asked; -1 when
    it asks and one is missing; 0 when the prompt asks for no kind."""
    kinds = asked_kinds(prompt)
    if not kinds:
        return KIND_NONE
    text, limit = f"{title}\n{content}", scan_chars(title, content_max_chars)
    return KIND_HELD if all(holds_kind(text, k, limit=limit) for k in kinds) else KIND_MISSING


def prompt_cover(prompt_terms: Iterable[str], memory_terms: set[str] | frozenset[str],
                 idf: Mapping[str, float]) -> float:
    """The IDF-weighted share of the prompt's content words (stems) the memory holds; 0 for a prompt without any.
    A word missing from `idf` weighs the highest weight given (no memory holds it)."""
    terms = list(dict.fromkeys(prompt_terms))
    top = max(idf.values(), default=1.0)
    weights = {t: idf.get(t, top) for t in terms}
    total = sum(weights.values())
    return sum(w for t, w in weights.items() if t in memory_terms) / total if total else 0.0


NEAR = (-2.0, 1.0)  # today's log-odds band where the right memory below the gate and the near miss above it meet


def main(argv: list[str]) -> int:
    import tempfile
    from pathlib import Path

    from bench.whisper_quality import setup_django

    setup_django(Path(tempfile.mkdtemp(prefix="evidence-")))
    from bench.datasets.loader import merged_memories
    from memory.ranking.features import idf, query_terms, stems
    from whisper import evidence
    from whisper.kinds import SCAN_CHARS

    src, dst = argv
    memories = {m["key"]: m for m in merged_memories()[0]}
    words = {k: frozenset(stems(f"{m.get('title') or ''} {m.get('content') or ''} {' '.join(m.get('tags') or ())}"))
             for k, m in memories.items()}

    def scanned(title: str, content: str) -> frozenset[str]:
        return frozenset(stems(f"{title}\n{content}"[:SCAN_CHARS]))

    df = Counter(t for ws in words.values() for t in ws)
    weights = {t: idf(n, len(words)) for t, n in df.items()}
    dump = json.loads(open(src).read())
    for item in dump:
        p = item["prompt"]
        for text, call in zip(list(p.get("history", [])) + [p["prompt"]], item["calls"]):
            terms = query_terms(text)
            for c in call or ():
                m = memories.get(c["key"])
                if m is None:
                    continue
                title, content, held = m.get("title") or "", m.get("content") or "", words[c["key"]]
                c["evidence"] = {
                    "kind": kind_evidence(text, title=title, content=content),
                    "thing": evidence.thing_evidence(text, title=title, content=content),
                    "pcover": prompt_cover(terms, held, weights),
                    "mcover": evidence.memory_cover(terms, held, weights),
                    "mcover3": evidence.memory_cover(terms, held, weights, top=3),
                    "mcover10": evidence.memory_cover(terms, held, weights, top=10),
                    "tcover": evidence.memory_cover(terms, set(stems(title)), weights, top=99),
                    **{f"mcover{k}": evidence.memory_cover(terms, held, weights, top=k) for k in (1, 15, 20, 40)},
                    "mcover_all": evidence.memory_cover(terms, held, weights, top=10**6),
                    "mcover10s": evidence.memory_cover(terms, scanned(title, content), weights, top=10),
                    "mcover_s": evidence.memory_cover(terms, scanned(title, content), weights, top=10**6),
                }
    open(dst, "w").write(json.dumps(dump))
    return 0


VARIANTS = (("today's inputs", ()),) + tuple((f"+ {n}", (n,)) for n in (
    "ev_kind", "ev_kind_held", "ev_kind_missing", "ev_pcover", "ev_mcover", "ev_mcover1", "ev_mcover3", "ev_mcover10",
    "ev_mcover15", "ev_mcover20", "ev_mcover40", "ev_mcover_all", "ev_mcover10s", "ev_tcover",
    "ev_kind_near", "ev_thing", "ev_thing_missing")) + (
    ("+ ev_thing_missing, ev_mcover_all", ("ev_thing_missing", "ev_mcover_all")),
    ("+ ev_kind_held, ev_mcover", ("ev_kind_held", "ev_mcover")),
    ("+ ev_kind, ev_pcover, ev_mcover", ("ev_kind", "ev_pcover", "ev_mcover")))


def compare(path: str) -> int:
    """Per variant on dev batches 1-8: the AUC near the gate of the input alone and of the grouped log-odds with it,
    the AUC over all hits, the grouped operating point and its figures."""
    from bench import whisper_gate_fit as gf
    from whisper.conf import GATE_WEIGHTS

    dump = gf.prepared(json.loads(open(path).read()), False)
    x0, y, where = gf.rows(dump)
    today = GATE_WEIGHTS[0] + x0 @ np.array(GATE_WEIGHTS[1:])
    near = (today >= NEAR[0]) & (today <= NEAR[1])
    print(f"{len(dump)} prompts, {len(y)} hits ({int(y.sum())} right); near the gate {int(near.sum())} "
          f"({int(y[near].sum())} right)")
    print("| variant | AUC alone near | AUC grouped near (batch / store) | AUC grouped all | log-odds >= | "
          "grouped hit / precision / silence |\n|---|---|---|---|---:|---|")
    for name, extras in VARIANTS:
        x, y, where = gf.rows(dump, extras)
        est = gf.estimates(dump, x, y, where, by_prompt=False)
        cur = gf.curves(dump, est)
        t = gf.operating_point(cur["grouped"])
        alone = roc_auc(x[near, -1], y[near]) if extras else float("nan")
        by = {g: np.array([est[g][k] for k in where]) for g in gf.GROUPINGS}
        fig = " / ".join(f"{v:.3f}" for v in cur["grouped"][t]) if t is not None else "none"
        print(f"| {name} | {alone:.3f} | " + " / ".join(f"{roc_auc(by[g][near], y[near]):.3f}" for g in gf.GROUPINGS)
              + " | " + " / ".join(f"{roc_auc(by[g], y):.3f}" for g in gf.GROUPINGS)
              + f" | {t if t is None else f'{t:+.1f}'} | {fig} |")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--compare"]:
        sys.exit(compare(*sys.argv[2:]))
    sys.exit(main(sys.argv[1:]))
