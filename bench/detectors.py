"""Detector precision and recall on labelled memory pairs (bench/detectors/pairs.txt), split dev/test.

    python -m bench.detectors [--show-errors] [--write]

Every pair is embedded with the real offline embedder (title and content, as the index embeds them) and judged by
the same pure functions the no-LLM jobs call: `duplicate_candidates` + `heuristic_verdict` (duplicate_merger),
`conflict_candidates` + `heuristic_conflict` (conflict_detector: `contradicts` is a conflict, `evolved_from` a
supersession). Each detector is scored on its own: precision = its true positives / everything it flagged, recall =
its true positives / the pairs labelled with its kind. The split is stratified by category with a fixed seed; tune on
dev only (`--show-errors` prints dev mistakes, never test ones, and the dev pairs that only the duplicate
similarity lines keep from a merge: the rules must hold them back, not the thresholds). `--write` replaces its marked block in the "Detectors" section of
docs/benchmarks.md. No Django, no database: the detectors are pure.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
PAIRS = HERE / "detectors" / "pairs.txt"
SEED = 15
SECTION = "Detectors"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
KINDS = ("duplicate", "conflict", "supersession")
MARGIN_LINES = (0.5, 0.5)
BEFORE = (
    "Before the token-diff comparison (maintenance/detectors/compare.py), on the same pairs: duplicate precision "
    "0.548 dev / 0.586 test, conflict 0.900 / 0.889, supersession 0.382 / 0.389 (29 of 30 dated-log pairs and 17 "
    "of 25 templates were flagged)."
    "\n\nSwapped words (2026-11-26): with the comparison alone, duplicate precision was 1.000 dev / 0.895 test "
    "(17 of 19; the category table showed a conflict pair and a template pair merged, left unexamined so test "
    "stayed untuned). Dev had no wrong merge to study, so its margin was read instead (`--show-errors` lists the "
    "dev pairs that only the similarity lines keep from a merge): at cosine and composite 0.5 the rules alone "
    "merged three dev non-duplicates, among them a template with two spans changed (\"lentil soup, 200 g "
    "lentils\" / \"pea soup, 200 g peas\"), which no signal caught, and dev's one missed duplicate was held back by "
    "\"encrypted\" / \"encryption\" counted as a changed word. Two general rules followed: a statement whose every "
    "change of substance is words replaced in place (nothing moved, as a paraphrase moves words) is the same "
    "template holding other values, and other forms of one word (a shared stem, common suffixes) are no change; "
    "an antonym inside any replaced span opposes the sides (antonyms are now also matched on the stemmed tokens "
    "the diff compares: \"trims\" / \"keeps\" never matched before). After: one dev pair at the margin, dev "
    "1.000 precision and 1.000 recall, and test (run once) 1.000 precision (17 of 17), recall unchanged at 0.944; "
    "conflict and supersession unchanged."
    "\n\nOn a whole store: the cold no-LLM sleep cycle of `python -m bench.sleep_cycle --sizes 1000` (the generated "
    "bench corpus, which plants no contradiction) proposed 235 conflicts before and 0 after, 17 merges before and 8 "
    "after; the 161 cross-space link proposals that a queue full of conflicts used to drop are now proposed "
    "(measured 2026-11-23; counts only, the times of that run were taken at a load average of 12 on 2 cores). A "
    "no-LLM cycle over the three labelled stores bench/datasets held then (lifelog, devprojects, docs: 168 memories; "
    "the fourth, club, came later and was not run) proposes no conflict and merges nothing; the old detectors, run "
    "on the same neighbour pairs, flagged none either: those stores do not hold these traps."
)
TYPES = {"fact", "preference", "observation", "goal", "decision", "procedure", "concept", "event"}


@dataclass(frozen=True)
class Side:
    title: str
    content: str
    type: str


@dataclass(frozen=True)
class LabelledPair:
    n: int
    category: str
    label: str
    a: Side
    b: Side


def _side(text: str, default_type: str) -> Side:
    text, type_ = text.strip(), default_type
    if text.startswith("[") and "]" in text:
        type_, text = text[1:text.index("]")], text[text.index("]") + 1:].strip()
    title, _, content = text.rpartition(" :: ")
    return Side(title=title.strip(), content=content.strip(), type=type_)


def load_pairs(path: Path = PAIRS) -> list[LabelledPair]:
    """Parse the labelled pairs file (format in its header)."""
    pairs, category, label, type_ = [], "", "", "fact"
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            category, label, type_ = line[3:].split()
            continue
        if not line.strip() or line.startswith("#") or not category:
            continue
        a, _, b = line.partition(" || ")
        sa = _side(a, type_)
        sb = _side(b, sa.type if type_ != sa.type else type_)
        pairs.append(LabelledPair(len(pairs), category, label, sa, sb))
    return pairs


def split(pairs: list[LabelledPair], seed: int = SEED) -> dict[str, list[LabelledPair]]:
    """Half of each category to dev, half to test (a fixed shuffle)."""
    rng = random.Random(seed)
    out: dict[str, list[LabelledPair]] = {"dev": [], "test": []}
    for category in sorted({p.category for p in pairs}):
        members = [p for p in pairs if p.category == category]
        rng.shuffle(members)
        half = (len(members) + 1) // 2
        out["dev"] += members[:half]
        out["test"] += members[half:]
    return out


def _facts(side: Side, n: int, which: str, created: datetime):
    from maintenance.detectors.facts import NodeFacts

    return NodeFacts(row_id=2 * n + (which == "b"), uid=f"{n:04d}-{which}", type=side.type, tier="working",
                     space=None, space_locked=False, title=side.title, content=side.content, tags=(),
                     created=created, updated=created, last_accessed=created, last_review=None, stability=1.0,
                     importance=0.5, access_count=0, is_self=False, embed_hash="", indexed_seq=2 * n)


def cosines(pairs: list[LabelledPair]) -> dict[int, float]:
    """The cosine of each pair's two sides, embedded as the index embeds them."""
    from memory.embeddings import FastEmbedEmbedder, embedding_text

    texts = [embedding_text(s.title or None, s.content) for p in pairs for s in (p.a, p.b)]
    vectors = FastEmbedEmbedder().embed_documents(texts)
    return {p.n: float(vectors[2 * i] @ vectors[2 * i + 1]) for i, p in enumerate(pairs)}


def judge(pairs: list[LabelledPair], cos_of: dict[int, float], *, dup_lines: tuple[float, float] | None = None,
          ) -> dict[int, set[str]]:
    """What the no-LLM detectors flag for each pair: a subset of KINDS.

    `dup_lines` lowers the duplicate similarity lines (cosine, composite) for the margin check of --show-errors.
    """
    from maintenance.detectors import conflicts as cf
    from maintenance.detectors import duplicates as dup
    from maintenance.detectors.facts import Pair

    min_cos, min_composite = dup_lines or (dup.LIKELY_MIN_COS, dup.LIKELY_MIN_COMPOSITE)
    out: dict[int, set[str]] = {}
    for p in pairs:
        cos = cos_of[p.n]
        pair = Pair(_facts(p.a, p.n, "a", T0), _facts(p.b, p.n, "b", T0 + timedelta(days=7)), cos)
        flagged = set()
        for candidate, score in dup.duplicate_candidates([pair], min_cos=min_cos, min_composite=min_composite):
            if dup_lines and not dup.differs(candidate):  # the rules alone, below the similarity lines
                flagged.add("duplicate")
            elif dup.heuristic_verdict(candidate, score, auto_threshold=0.85) in ("clear", "likely"):
                flagged.add("duplicate")
        for candidate in cf.conflict_candidates([pair], linked=set(), min_cos=cf.HEURISTIC_MIN_COS):
            draft = cf.heuristic_conflict(candidate)
            if draft is not None:
                flagged.add("conflict" if draft.payload["edge"] == "contradicts" else "supersession")
        out[p.n] = flagged
    return out


def scores(pairs: list[LabelledPair], flagged: dict[int, set[str]]) -> dict[str, dict]:
    """Precision, recall and counts per detector."""
    out = {}
    for kind in KINDS:
        tp = sum(1 for p in pairs if kind in flagged[p.n] and p.label == kind)
        fp = sum(1 for p in pairs if kind in flagged[p.n] and p.label != kind)
        positives = sum(1 for p in pairs if p.label == kind)
        out[kind] = {"tp": tp, "fp": fp, "fn": positives - tp, "positives": positives,
                     "precision": tp / (tp + fp) if tp + fp else None,
                     "recall": tp / positives if positives else None}
    return out


def false_flags_by_category(pairs: list[LabelledPair], flagged: dict[int, set[str]]) -> dict[str, int]:
    """How many pairs of each category got a flag they should not have."""
    out: dict[str, int] = {}
    for p in pairs:
        wrong = flagged[p.n] - {p.label}
        if wrong:
            out[p.category] = out.get(p.category, 0) + 1
    return out


def _fmt(x: float | None) -> str:
    return "—" if x is None else f"{x:.3f}"


def report(results: dict[str, dict], counts: dict[str, dict[str, int]], traps: dict[str, dict[str, int]],
           seconds: float) -> str:
    rows = ["| Detector | Split | Flagged | True positives | Precision | Recall (of labelled) |",
            "|---|---|---|---|---|---|"]
    for kind in KINDS:
        for name in ("dev", "test"):
            r = results[name][kind]
            rows.append(f"| {kind} | {name} | {r['tp'] + r['fp']} | {r['tp']} | {_fmt(r['precision'])} | "
                        f"{_fmt(r['recall'])} ({r['tp']}/{r['positives']}) |")
    cats = sorted(set(counts["dev"]) | set(counts["test"]))
    mix = ", ".join(f"{c} {counts['dev'].get(c, 0) + counts['test'].get(c, 0)}" for c in cats)
    trap_rows = ["| Category | Pairs (dev/test) | Wrongly flagged (dev/test) |", "|---|---|---|"]
    for c in cats:
        trap_rows.append(f"| {c} | {counts['dev'].get(c, 0)}/{counts['test'].get(c, 0)} | "
                         f"{traps['dev'].get(c, 0)}/{traps['test'].get(c, 0)} |")
    total = sum(counts["dev"].values()) + sum(counts["test"].values())
    return (
        f"`python -m bench.detectors --write` — {total} labelled pairs written for Ormah (bench/detectors/pairs.txt: "
        f"{mix}), split dev/test by category with seed {SEED}. The no-LLM detectors the jobs run "
        "(maintenance/detectors), real MiniLM embeddings; thresholds were tuned on dev only. "
        f"CPU time {seconds:.1f} s for embedding and judging {2 * total} texts (load average "
        f"{os.getloadavg()[0]:.1f} on a shared 2-core machine).\n\n"
        + "\n".join(rows) + "\n\nFalse flags by category (a pair counts once, whatever detector flagged it):\n\n"
        + "\n".join(trap_rows) + "\n\n" + BEFORE + "\n\nRecall is the share of labelled pairs a detector finds on its own; with an LLM "
        "configured the jobs send the wider candidate set (cos ≥ 0.25 for duplicates, 0.40 for conflicts) to the "
        "model instead, which this bench does not measure.\n"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show-errors", action="store_true", help="print the dev split's mistakes")
    parser.add_argument("--write", action="store_true",
                        help="replace its marked block in the Detectors section of docs/benchmarks.md")
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))
    pairs = load_pairs()
    parts = split(pairs)
    start = time.process_time()
    cos_of = cosines(pairs)
    flagged = judge(pairs, cos_of)
    seconds = time.process_time() - start
    results = {name: scores(members, flagged) for name, members in parts.items()}
    counts = {name: {} for name in parts}
    for name, members in parts.items():
        for p in members:
            counts[name][p.category] = counts[name].get(p.category, 0) + 1
    traps = {name: false_flags_by_category(members, flagged) for name, members in parts.items()}
    text = report(results, counts, traps, seconds)
    print(text)
    if args.show_errors:
        for p in parts["dev"]:
            got = flagged[p.n]
            if got != ({p.label} & set(KINDS)) and (got - {p.label} or p.label in KINDS):
                print(f"[{p.category}/{p.label}] flagged={sorted(got)}\n  A: {p.a.title} :: {p.a.content}\n"
                      f"  B: {p.b.title} :: {p.b.content}")
        margin = judge(parts["dev"], cos_of, dup_lines=MARGIN_LINES)
        print(f"\nDev pairs only the similarity lines keep from a merge (at cosine {MARGIN_LINES[0]}, composite "
              f"{MARGIN_LINES[1]} the rules alone would merge them):")
        for p in parts["dev"]:
            if "duplicate" in margin[p.n] and p.label != "duplicate":
                print(f"  [{p.category}] cos {cos_of[p.n]:.2f}: {p.a.title} :: {p.a.content} || "
                      f"{p.b.title} :: {p.b.content}")
    if args.write:
        from bench._common import write_block

        write_block("detectors", text)


if __name__ == "__main__":
    main()
