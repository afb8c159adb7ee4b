"""Auto-links measured on labelled links: raw cosine (what a remember links on) against the scorer's probability
(what memory.search.related_memories read until session 20 removed it on these figures), with each method's
threshold chosen on a dev half and reported on a test half.

    python -m bench.auto_links [--write]

Labelled links: the `edges` of bench/recall/dataset.json (56) and of the labelled stores lifelog, devprojects and
club (20; docs has none). Each store is loaded into its own fresh home through the real services (real SQLite,
the real MiniLM embedder, auto-linking off, the labelled edges NOT written, so nothing is found through them), at
its fixed `now`. Every memory is then used as the query for the others, two ways:

- cosine: exactly what memory.services.links does at a remember: the memory's own vector against the index, the
  nearest AUTO_LINK_CANDIDATES + 1 rows, the memory itself dropped, the cross-space penalty subtracted;
- probability: the scorer's calibrated probability of recall for the memory's text as the query (recall_scored
  with activation off and no floor, the call the removed related_memories made), its best AUTO_LINK_CANDIDATES
  others.

A pair's score for a method is the better of its two directions (a remember links the later memory to the
earlier; the maintenance job looks both ways). Pairs are undirected. The split, written before any run: a labelled
edge goes to dev or test by bench.datasets.split.assign_splits (SHA-256 of seed:store:pair, halved within each
edge type), an unlabelled pair by the parity of the same hash. The rule, written before any run: each method's
threshold is the one with the best F1 on the dev half (grid step 0.01; a tie goes to the higher threshold); both
are then reported on the test half. Precision is a lower bound: the labels name the links their writers meant,
not every pair a person would accept as related.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench.datasets import loader

REPO = Path(__file__).resolve().parent.parent
STORES = ("recall", *(name for name in loader.STORES if name != "docs"))  # runnable only (loader.SEALED_STORES)
METHODS = ("cosine", "probability")
GRIDS = {"cosine": [round(0.30 + 0.01 * i, 2) for i in range(61)],
         "probability": [round(0.05 + 0.01 * i, 2) for i in range(91)]}


def _dataset(name: str):
    from bench.datasets.loader import load_store, to_recall_dataset
    from bench.recall.harness import load_dataset

    return load_dataset() if name == "recall" else to_recall_dataset(load_store(name), None)


def _cpu() -> float:
    return time.process_time()


def _run_store(name: str) -> dict:
    """Load one store (no auto-links, no labelled edges) and score every memory against the others both ways."""
    from dataclasses import replace

    from bench.recall import harness
    from memory import index, runtime
    from memory.domain.requests import NodeCreate, build_node
    from memory.domain.search import SearchQuery
    from memory.search import query_vector, recall_scored
    from memory.search.semantic import vector_search_many
    from memory.selectors import link_targets
    from memory.services.links import AUTO_LINK_CANDIDATES, EMBED_ONLY_ID
    from django.conf import settings

    ds = _dataset(name)
    keymap = harness.seed(replace(ds, edges=()), auto_link=False)
    key_of = {uid: key for key, uid in keymap.items()}
    penalty = float(settings.ORMAH["CROSS_SPACE_PENALTY"])
    emb = runtime.embedder()
    scores: dict[str, dict[str, float]] = {m: {} for m in METHODS}
    cpu = {m: 0.0 for m in (*METHODS, "embed")}

    def keep(method: str, a: str, b: str, value: float) -> None:
        pair = "|".join(sorted((a, b)))
        scores[method][pair] = max(value, scores[method].get(pair, float("-inf")))

    for m in ds.memories:
        request = NodeCreate(content=m["content"], title=m.get("title"), type=m["type"], tier=m["tier"],
                             space=m.get("space"), tags=m.get("tags") or [], about_self=bool(m.get("about_self")))
        started = _cpu()
        node = build_node(request, node_id=EMBED_ONLY_ID, now=ds.now)
        vecs, _ = index.node_vectors([node], emb)
        hits = vector_search_many([vecs[0][0]], AUTO_LINK_CANDIDATES + 1)[0]
        rows = link_targets(row_ids={h.row_id for h in hits})
        found = []
        for h in hits:
            target = rows.get(h.row_id)
            if target is None or target.is_self or key_of.get(target.uid) in (None, m["key"]):
                continue
            cross = (target.space or "") != (m.get("space") or "")
            found.append((key_of[target.uid], h.cosine - (penalty if cross else 0.0)))
        cpu["cosine"] += _cpu() - started
        for key, sim in found[:AUTO_LINK_CANDIDATES]:
            keep("cosine", m["key"], key, sim)
        started = _cpu()
        query_vector(m["content"][:2000], emb)  # alone, to say how much of the recall is the query's embedding
        cpu["embed"] += _cpu() - started
        started = _cpu()
        query = SearchQuery(query=m["content"][:2000], limit=AUTO_LINK_CANDIDATES + 1, activation=False,
                            min_score=0.0)
        scored = recall_scored(query=query, now=ds.now)
        cpu["probability"] += _cpu() - started
        uid_of = {r: t.uid for r, t in link_targets(row_ids={c.row_id for c in scored}).items()}
        others = [(key_of.get(uid_of.get(c.row_id, "")), c.score) for c in scored]
        for key, p in [(k, p) for k, p in others if k not in (None, m["key"])][:AUTO_LINK_CANDIDATES]:
            keep("probability", m["key"], key, float(p))
    labelled = {"|".join(sorted((e["source"], e["target"]))): e["edge"] for e in ds.edges}
    return {"memories": len(ds.memories), "labelled": labelled, "scores": scores,
            "cpu_ms": {k: 1000 * v / len(ds.memories) for k, v in cpu.items()}}


def _pair_hash(store: str, pair: str) -> str:
    from bench.datasets.split import SEED

    return hashlib.sha256(f"{SEED}:{store}:{pair}".encode()).hexdigest()


def split_pairs(store: str, labelled: dict[str, str]) -> dict[str, str]:
    """Labelled pair -> dev | test (halved within each edge type, bench.datasets.split)."""
    from bench.datasets.split import assign_splits

    return assign_splits(f"links:{store}", [{"id": p, "category": t} for p, t in labelled.items()])


def unlabelled_split(store: str, pair: str) -> str:
    return "dev" if int(_pair_hash(store, pair), 16) % 2 == 0 else "test"


def prf(results: dict, method: str, split: str, t: float) -> tuple[int, int, int, float, float, float]:
    """(found labelled, predicted, labelled, precision, recall, F1) over every store's pairs of `split`."""
    tp = pred = pos = 0
    for store, res in results.items():
        halves = split_pairs(store, res["labelled"])
        pos += sum(1 for p in res["labelled"] if halves[p] == split)
        for pair, value in res["scores"][method].items():
            half = halves[pair] if pair in res["labelled"] else unlabelled_split(store, pair)
            if half == split and value >= t:
                pred += 1
                tp += pair in res["labelled"]
    precision = tp / pred if pred else 0.0
    recall = tp / pos if pos else 0.0
    f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
    return tp, pred, pos, precision, recall, f1


def choose(results: dict, method: str) -> float:
    """The dev half's best-F1 threshold (a tie goes to the higher one)."""
    return max(GRIDS[method], key=lambda t: (round(prf(results, method, "dev", t)[5], 9), t))


def by_type(results: dict, method: str, split: str, t: float) -> dict[str, tuple[int, int]]:
    """Edge type -> (found, labelled) of `split` at threshold t."""
    out: dict[str, list[int]] = {}
    for store, res in results.items():
        halves = split_pairs(store, res["labelled"])
        for pair, kind in res["labelled"].items():
            if halves[pair] != split:
                continue
            cell = out.setdefault(kind, [0, 0])
            cell[1] += 1
            cell[0] += res["scores"][method].get(pair, float("-inf")) >= t
    return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def render(results: dict, seconds: float, cpu: float) -> str:
    fixed = {"cosine": 0.65, "probability": 0.5}  # today's defaults (ORMAH_AUTO_LINK_THRESHOLD, auto_link)
    chosen = {m: choose(results, m) for m in METHODS}
    lines = [
        "`python -m bench.auto_links`: labelled links of bench/recall/dataset.json and the lifelog, devprojects and "
        "club stores, each store in its own fresh home (real MiniLM-L6 int8 embedder, auto-linking off, labelled "
        "edges not written). Every memory is the query for the others: **cosine** = a remember's auto-link "
        "search (own vector, nearest 7 rows, cross-space penalty 0.1), **probability** = the scorer's "
        "probability for the memory's text as a recall query (the call of the removed related_memories: "
        "activation off, no floor). A pair "
        "scores the better of its two directions, at most 6 others per memory. Threshold rule, fixed before the "
        "run: best F1 on the dev half (ties to the higher); reported on the test half. Precision is a lower "
        "bound (labels are the links their writers meant, not every related pair).",
        "",
        "| method | threshold | dev found / predicted / labelled | dev P / R / F1 | test found / predicted / labelled "
        "| test P / R / F1 |",
        "|---|---|---|---|---|---|",
    ]
    for method in METHODS:
        for label, t in ((f"today {fixed[method]}", fixed[method]), (f"chosen on dev {chosen[method]}",
                                                                      chosen[method])):
            cells = []
            for split in ("dev", "test"):
                tp, pred, pos, p, r, f = prf(results, method, split, t)
                cells += [f"{tp} / {pred} / {pos}", f"{p:.3f} / {r:.3f} / {f:.3f}"]
            lines.append(f"| {method} | {label} | " + " | ".join(cells) + " |")
    lines += ["", "Labelled links found per edge type at each method's chosen threshold, dev and test together "
              "(found / labelled):", "", "| edge type | cosine | probability |", "|---|---:|---:|"]
    types = {}
    for method in METHODS:
        for split in ("dev", "test"):
            for kind, (f, n) in by_type(results, method, split, chosen[method]).items():
                cell = types.setdefault(kind, {}).setdefault(method, [0, 0])
                cell[0] += f
                cell[1] += n
    for kind, cells in sorted(types.items(), key=lambda kv: -kv[1]["cosine"][1]):
        lines.append(f"| {kind} | " + " | ".join(f"{cells[m][0]}/{cells[m][1]}" for m in METHODS) + " |")
    per_store = ", ".join(f"{s} {r['memories']} memories / {len(r['labelled'])} links" for s, r in results.items())
    cost = {m: sum(r["cpu_ms"][m] * r["memories"] for r in results.values())
            / sum(r["memories"] for r in results.values()) for m in (*METHODS, "embed")}
    lines += ["", f"Stores: {per_store}. CPU per memory searched (mean): cosine {cost['cosine']:.2f} ms, "
              f"probability {cost['probability']:.2f} ms for the recall once the text's query vector is in the "
              f"embedder's LRU, plus {cost['embed']:.2f} ms to embed it (the cosine reads the memory's own vector, "
              f"which a remember computes anyway). Run time {seconds:.0f} s wall, {cpu:.0f} s CPU, load "
              f"average {os.getloadavg()[0]:.1f}."]
    return "\n".join(lines)


def _one_process(name: str, home: Path) -> dict:
    """Each store in a child process with its own home, so Django's settings and caches start clean."""
    code = ("import json, sys; from pathlib import Path; import bench.stores_recall as s; "
            "import bench.auto_links as b; "
            "s._django(Path(sys.argv[1])); from django.core.management import call_command; "
            "call_command('migrate', verbosity=0, interactive=False); "
            "print('RESULT' + json.dumps(b._run_store(sys.argv[2])))")
    env = {**os.environ, "ORMAH_HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("ORMAH_DB_PATH", None)
    done = subprocess.run([sys.executable, "-c", code, str(home), name], cwd=REPO, env=env,
                          capture_output=True, text=True, check=False)
    line = next((ln for ln in done.stdout.splitlines() if ln.startswith("RESULT")), None)
    if line is None:
        raise SystemExit(f"{name}: the run failed\n{done.stderr[-3000:]}")
    return json.loads(line[len("RESULT"):])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="replace its marked block in docs/benchmarks.md")
    parser.add_argument("--dump", type=Path, help="also write the per-pair scores here (JSON)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    results = {}
    for name in STORES:
        with tempfile.TemporaryDirectory(prefix=f"ormah-links-{name}-") as tmp:
            results[name] = _one_process(name, Path(tmp))
    cpu = sum(getattr(resource.getrusage(who), f) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
              for f in ("ru_utime", "ru_stime"))
    body = render(results, time.perf_counter() - started, cpu)
    print(body)
    if args.dump:
        args.dump.write_text(json.dumps(results))
    if args.write:
        from bench._common import write_block

        write_block("auto_links", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
