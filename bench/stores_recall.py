"""Recall on the labelled stores of bench/datasets (docs, lifelog, devprojects, club, home, course, choir), per
split.

    python -m bench.stores_recall [--split dev|test|both] [--write] [--database-url postgres://...]

Each store is loaded into its own fresh temporary ORMAH_HOME through the real services with the real offline
embedder, at the store's fixed `now`, and its answerable queries are ranked three ways (BM25 alone, vectors
alone, the full pipeline with the learned scorer). The scorer was fitted on the dev splits only
(bench/fit_scorer.py), so the test rows are the held-out figures; dev rows are shown beside them. Off-topic
queries (no answer) are counted separately: the share for which recall answers "no good match" (an empty list).
`--database-url` (default ORMAH_DATABASE_URL) runs on that PostgreSQL server instead of SQLite: each store in a
fresh database of its own, dropped after it (scripts/pg-cluster.sh starts a throwaway server).
`--write` replaces its marked block in the "Recall on the labelled stores" section of docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import defaultdict
from pathlib import Path

from bench.datasets.loader import STORES  # the runnable stores: a sealed one (loader.SEALED_STORES) is left out
from bench.whisper_quality import scratch_database

REPO = Path(__file__).resolve().parent.parent
MODES = ("bm25", "vectors", "full")


def _django(home: Path) -> None:
    """Django in a store's child process: its home, and the index ORMAH_DATABASE_URL names (set by the parent: a
    scratch database) or the home's SQLite file."""
    os.environ["ORMAH_HOME"] = str(home)
    os.environ.pop("ORMAH_DB_PATH", None)
    # The real model's vectors, kept on disk between runs (bench/datasets/embed_cache.py); queries are not cached.
    os.environ.setdefault("ORMAH_EMBEDDER", "bench.datasets.embed_cache.CachedEmbedder")
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from bench.locomo_stores import use_scorer

    use_scorer()  # ORMAH_BENCH_SCORER: another packaged scorer file (bench.locomo_stores.use_scorer)


def _run_store(name: str, splits: tuple[str, ...]) -> dict:
    from bench.datasets.loader import load_store, to_recall_dataset
    from bench.recall import harness
    from memory.domain.search import SearchQuery
    from memory.search import recall

    store = load_store(name)
    everything = to_recall_dataset(store, None)
    keymap = harness.seed(everything)
    out: dict = {"memories": len(everything.memories)}
    for split in splits:
        ds = to_recall_dataset(store, split)
        report = harness.score(ds, harness.rank_all(ds, keymap, modes=MODES))
        per_cat: dict[str, dict[str, float]] = defaultdict(dict)
        for mode in MODES:
            for cat, sc in report.scores[mode].items():
                per_cat[cat][mode] = sc.mean()[1]
        off = [q for q in store.queries_in(split) if not q.answerable]
        silenced = sum(1 for q in off if not recall(query=SearchQuery(query=q.text, limit=10), now=store.now))
        out[split] = {
            "n": len(ds.queries),
            "overall": {mode: report.overall(mode) for mode in MODES},
            "categories": {c: dict(v) for c, v in per_cat.items() if c != "all"},
            "counts": {c: sum(1 for q in ds.queries if q.category == c) for c in per_cat if c != "all"},
            "off_topic": (silenced, len(off)),
        }
    return out


def render(results: dict, seconds: float) -> str:
    lines = [
        "`python -m bench.stores_recall`: each store of bench/datasets in its own fresh home, real MiniLM-L6 "
        "int8 embedder, limit 10, at the store's fixed `now`. The scorer was fitted on the dev splits only; "
        "the test rows are held out. Off-topic: queries with no answer for which recall returned nothing "
        "(\"no good match\").",
        "",
        "| store | split | queries | BM25 alone R@5 / R@10 / MRR | vectors alone | full pipeline | off-topic silenced |",
        "|---|---|---:|---|---|---|---:|",
    ]
    for name, res in results.items():
        for split in ("dev", "test"):
            if split not in res:
                continue
            r = res[split]
            cells = [" / ".join(f"{x:.3f}" for x in r["overall"][m]) for m in MODES]
            silenced, off = r["off_topic"]
            lines.append(f"| {name} ({res['memories']} memories) | {split} | {r['n']} | " + " | ".join(cells)
                         + f" | {silenced}/{off} |")
    lines += ["", "Full pipeline recall@10 per category (dev / test; queries in brackets):", "",
              "| store | category | dev | test |", "|---|---|---:|---:|"]
    for name, res in results.items():
        cats = sorted({c for s in ("dev", "test") if s in res for c in res[s]["categories"]})
        for cat in cats:
            cell = []
            for split in ("dev", "test"):
                r = res.get(split, {})
                if cat in r.get("categories", {}):
                    cell.append(f"{r['categories'][cat]['full']:.2f} ({r['counts'][cat]})")
                else:
                    cell.append("-")
            lines.append(f"| {name} | {cat} | {cell[0]} | {cell[1]} |")
    import resource

    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    lines += ["", f"Run time {seconds:.0f} s wall, {cpu:.0f} s CPU, load average {os.getloadavg()[0]:.1f}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test", "both"), default="both")
    parser.add_argument("--write", action="store_true", help="replace its marked block in docs/benchmarks.md")
    parser.add_argument("--database-url", default=os.environ.get("ORMAH_DATABASE_URL") or None,
                        help="run on this PostgreSQL server (default: ORMAH_DATABASE_URL; unset: SQLite), each store "
                             "in a fresh database of its own made for the run and dropped after it")
    args = parser.parse_args(argv)
    if args.database_url and args.write:
        parser.error("--write records the SQLite run; leave --database-url and ORMAH_DATABASE_URL unset")
    splits = ("dev", "test") if args.split == "both" else (args.split,)
    started = time.perf_counter()
    results = {}
    for name in STORES:
        with (tempfile.TemporaryDirectory(prefix=f"ormah-stores-{name}-") as tmp,
              scratch_database(args.database_url, f"ormah_stores_recall_{name}_{os.getpid()}") as url):
            os.environ["ORMAH_HOME"] = tmp
            results[name] = _one_process(name, splits, Path(tmp), url)
    body = render(results, time.perf_counter() - started)
    if args.database_url:
        from bench.pg import server_version

        body += f" Index: {server_version(args.database_url)}."
    print(body)
    if args.write:
        from bench._common import write_block

        write_block("stores_recall", body)
    return 0


def _one_process(name: str, splits: tuple[str, ...], home: Path, database_url: str | None = None) -> dict:
    """Each store in a child process with its own home (and on PostgreSQL its own database `database_url`), so
    Django's settings and caches start clean."""
    import json
    import subprocess
    import sys

    code = ("import json, sys; from pathlib import Path; import bench.stores_recall as b; "
            "b._django(Path(sys.argv[1])); from django.core.management import call_command; "
            "call_command('migrate', verbosity=0, interactive=False); "
            "print('RESULT' + json.dumps(b._run_store(sys.argv[2], tuple(sys.argv[3:]))))")
    env = {**os.environ, "ORMAH_HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("ORMAH_DB_PATH", None)
    env.pop("ORMAH_DATABASE_URL", None)
    if database_url:
        env["ORMAH_DATABASE_URL"] = database_url
    done = subprocess.run([sys.executable, "-c", code, str(home), name, *splits], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"{name}: the run failed\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT"):])


if __name__ == "__main__":
    raise SystemExit(main())
