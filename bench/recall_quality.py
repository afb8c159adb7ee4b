"""Recall quality on bench/recall/dataset.json: recall@5, recall@10 and MRR for BM25 alone, vectors alone, fused
(RRF, no boosts or activation) and the full pipeline, overall and per category.

    python -m bench.recall_quality [--write] [--misses] [--no-sweep]

The dataset is loaded into a fresh temporary ORMAH_HOME through the real services (remember with auto-link,
connect, mark outdated, the self node) with the real offline MiniLM embedder, and evaluated at the dataset's
fixed `now`. The sweep re-ranks the same store with the defaults that differ from the original Ormah set back
one at a time, which is the measurement behind each change. `--write` replaces the "Recall quality" section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

SECTION = "Recall quality"
REPO = Path(__file__).resolve().parent.parent
BENCH_DOC = REPO / "docs" / "benchmarks.md"


def _django(home: Path) -> None:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ.pop("ORMAH_DB_PATH", None)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, interactive=False)


def _sweep(base) -> list[tuple[str, object]]:
    """The defaults that differ from the original Ormah, each set back (or moved) one at a time."""
    return [
        ("this pipeline's defaults", base),
        ("similarity_threshold 0.4 (original)", replace(base, similarity_threshold=0.4)),
        ("similarity_threshold 0.3", replace(base, similarity_threshold=0.3)),
        ("similarity_threshold 0.1", replace(base, similarity_threshold=0.1)),
        ("min_relevance 0.35 (original)", replace(base, min_relevance=0.35)),
        ("min_relevance 0.25", replace(base, min_relevance=0.25)),
        ("activation_decay 0.5 (original)", replace(base, activation_decay=0.5)),
        ("activation_decay 1.0", replace(base, activation_decay=1.0)),
        ("question_blend_weight 0.6", replace(base, question_blend_weight=0.6)),
        ("title_match_boost 0 (no title bonus)", replace(base, title_match_boost=0.0)),
        ("activation off", replace(base, activation_seeds=0)),
    ]


def _doc_section(body: str) -> None:
    import re

    section = f"## {SECTION}\n\n{body.strip()}\n"
    text = BENCH_DOC.read_text() if BENCH_DOC.exists() else "# Benchmarks\n"
    pattern = re.compile(rf"^## {re.escape(SECTION)}[ \t]*\n.*?(?=^## |\Z)", re.DOTALL | re.MULTILINE)
    if pattern.search(text):
        text = pattern.sub(lambda _: section + "\n", text, count=1).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + section
    tmp = BENCH_DOC.with_suffix(".md.tmp")
    tmp.write_text(text)
    os.replace(tmp, BENCH_DOC)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace the section in docs/benchmarks.md")
    parser.add_argument("--misses", action="store_true", help="list the queries the full pipeline misses")
    parser.add_argument("--no-sweep", action="store_true", help="skip the defaults sweep")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="ormah-recall-") as tmp:
        _django(Path(tmp))
        from bench.recall import harness
        from memory.domain.scoring import RecallConf

        ds = harness.load_dataset()
        started = time.perf_counter()
        keymap = harness.seed(ds)
        seeded = time.perf_counter() - started
        base = RecallConf()
        report = harness.evaluate(ds, keymap, conf=base)
        table = harness.render_markdown(report, ds)
        out = [
            f"`python -m bench.recall_quality` on bench/recall/dataset.json ({len(ds.memories)} memories, "
            f"{len(ds.edges)} edges, {len(ds.queries)} queries, now = {ds.now:%Y-%m-%dT%H:%M}Z), loaded through "
            f"the services in {seeded:.1f} s with the offline MiniLM-L6 int8 embedder (384 dimensions). BM25, "
            "vectors and fused run with the outdated filter of the pipeline and the raw query text; the full "
            "pipeline is `memory.search.recall` with limit 10 and `default_space` = the query's space.",
            "", table,
        ]
        if not args.no_sweep:
            rows = ["| variant | recall@5 | recall@10 | MRR |", "|---|---:|---:|---:|"]
            for label, conf in _sweep(base):
                r5, r10, mrr = harness.score(ds, harness.rank_all(ds, keymap, conf=conf, modes=("full",))).overall("full")
                rows.append(f"| {label} | {r5:.3f} | {r10:.3f} | {mrr:.3f} |")
            out += ["", "Full pipeline with one default changed (the measurement behind each MiniLM default):",
                    "", *rows]
        text = "\n".join(out)
        sys.stdout.write(text + "\n")
        if args.misses:
            sys.stdout.write("\nMissed by the full pipeline:\n" + "\n".join(harness.misses(report, ds)) + "\n")
        if args.write:
            _doc_section(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
