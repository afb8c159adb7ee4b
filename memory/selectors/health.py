"""Reads about the index's health: counts, drift between the files and the index, the doctor's checks, the
embedding model's status, and the health report that gathers them."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q

from memory import runtime
from memory.backends import backend
from memory.conf import get_conf
from memory.index import META_MODEL
from memory.malformed import malformed_files
from memory.models import EdgeRow, IndexMetaRow, NodeRow
from memory.store import MarkdownStore


def index_counts() -> dict:
    """Counts of nodes by tier and type, and of edges."""
    by_tier = dict(NodeRow.objects.values_list("tier").annotate(n=Count("id")))
    by_type = dict(NodeRow.objects.values_list("type").annotate(n=Count("id")))
    return {"nodes": sum(by_tier.values()), "by_tier": by_tier, "by_type": by_type,
            "edges": EdgeRow.objects.count()}


@dataclass
class Drift:
    not_indexed: list[str] = field(default_factory=list)
    missing_files: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not (self.not_indexed or self.missing_files or self.changed)

    def as_dict(self) -> dict:
        return {"clean": self.clean, "not_indexed": self.not_indexed, "missing_files": self.missing_files,
                "changed": self.changed}


def index_drift(*, store: MarkdownStore) -> Drift:
    """Differences between the node files and the index, judged by path, size and mtime."""
    drift = Drift()
    rows = {r[0]: (r[1], r[2]) for r in NodeRow.objects.values_list("file_path", "file_mtime_ns", "file_size")}
    on_disk = set()
    for path in store.iter_paths():
        rel = os.path.relpath(path, store.root)
        on_disk.add(rel)
        known = rows.get(rel)
        if known is None:
            drift.not_indexed.append(rel)
            continue
        st = path.stat()
        if (st.st_mtime_ns, st.st_size) != known:
            drift.changed.append(rel)
    drift.missing_files = sorted(set(rows) - on_disk)
    return drift


def rows_without_vector(*, limit: int = 20) -> tuple[int, list[str]]:
    """How many memories have no vector (an empty embed_hash: a model switch's re-embed that was interrupted, whose
    next sync resumes it), and the ids of the first `limit`. Semantic search cannot find them meanwhile."""
    rows = NodeRow.objects.filter(embed_hash="")
    return rows.count(), list(rows.order_by("uid").values_list("uid", flat=True)[:limit])


def rows_dated_after(*, when: datetime, limit: int = 20) -> list[dict]:
    """Memories whose `created`, `updated` or `last_accessed` is later than `when` (a hand edit's typo: the API
    refuses such dates), as [{"id", "created", "updated", "last_accessed"}], the first `limit` by id."""
    rows = NodeRow.objects.filter(Q(created__gt=when) | Q(updated__gt=when) | Q(last_accessed__gt=when))
    return [{"id": uid, **{k: v.isoformat() for k, v in zip(("created", "updated", "last_accessed"), times)}}
            for uid, *times in rows.order_by("uid").values_list("uid", "created", "updated", "last_accessed")[:limit]]


def dangling_connections() -> list[dict]:
    """Connections whose target is no live memory (forgotten, or its file deleted by hand), from the index rows.

    Returns [{"source", "target", "edge"}] sorted by source; `ormah doctor` reports them, `--heal` prunes them.
    """
    live = set(NodeRow.objects.values_list("uid", flat=True))
    found = []
    for uid, conns in NodeRow.objects.exclude(connections_json="[]").values_list("uid", "connections_json"):
        found += [{"source": uid, "target": c["target"], "edge": c["edge"]}
                  for c in json.loads(conns) if c["target"] not in live]
    return sorted(found, key=lambda d: (d["source"], d["target"], d["edge"]))



def index_extensions() -> dict:
    """The engine's and its vector extension's versions, and whether full text answers on the node index."""
    return backend().engine_info()


def index_model_id() -> str | None:
    """The id of the embedding model the index's vectors were made with."""
    return IndexMetaRow.objects.filter(key=META_MODEL).values_list("value", flat=True).first()


def model_status() -> dict:
    """The configured embedding model: id, dimension, and whether it loads and embeds in this process."""
    status = {"id": get_conf().embedding_model, "dim": None, "loaded": False, "index_model": index_model_id(),
              "error": None}
    try:
        embedder = runtime.embedder()
        status.update(id=embedder.model_id, dim=embedder.dim)
        embedder.embed_query("health")
        status["loaded"] = True
    except Exception as exc:  # noqa: BLE001
        # Trigger: a bad embedder path or model name, a missing or corrupt model file, onnxruntime failing.
        # Why: health must report, not crash. Outcome: loaded=false with the reason; status "degraded".
        status["error"] = f"{type(exc).__name__}: {exc}"[:500]
    return status


def health_report(*, store: MarkdownStore) -> dict:
    """Extensions, model, counts and drift (files vs index, malformed files); status "ok" or "degraded"."""
    extensions = index_extensions()
    model = model_status()
    drift = {**index_drift(store=store).as_dict(), "malformed": malformed_files(store=store)}
    drift["clean"] = drift["clean"] and not drift["malformed"]
    ok = extensions["vec"] is not None and extensions["fts5"] and model["loaded"] and drift["clean"]
    return {"status": "ok" if ok else "degraded", "extensions": extensions, "model": model,
            "counts": index_counts(), "drift": drift}
