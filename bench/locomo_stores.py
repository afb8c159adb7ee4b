"""The LoCoMo bench's stores: Django for the bench, one store per conversation (built once through the real
services, then reused from ~/.cache/ormah-bench/locomo/<model>/) and the file of cached query vectors."""

from __future__ import annotations

import json
import os
import re
import sys
import time
from pathlib import Path

from bench._common import DEFAULT_CACHE_DIR
from bench.locomo_data import Conversation

CACHE = DEFAULT_CACHE_DIR / "locomo"


def setup_django(base: Path, *, embedder: str | None = None, model: str | None = None,
                 database_url: str | None = None) -> None:
    """Django for the bench: settings from a scratch home; the model folder shared by every store; the engine is
    SQLite unless `database_url` names a PostgreSQL server."""
    base.mkdir(parents=True, exist_ok=True)
    os.environ["ORMAH_HOME"] = str(base / "_home")
    os.environ["ORMAH_MODEL_CACHE_DIR"] = str(DEFAULT_CACHE_DIR / "models")
    os.environ.pop("ORMAH_DB_PATH", None)
    os.environ.pop("ORMAH_DATABASE_URL", None)
    if database_url:
        os.environ["ORMAH_DATABASE_URL"] = database_url
    if embedder:
        os.environ["ORMAH_EMBEDDER"] = embedder
    if model:
        os.environ["ORMAH_EMBEDDING_MODEL"] = model
    os.environ["DJANGO_SETTINGS_MODULE"] = "ormah_site.settings"
    os.environ.setdefault("ORMAH_LOG_LEVEL", "WARNING")
    import django

    django.setup()


def use_scorer(name: str | None = None) -> None:
    """Make recall in this process read the packaged scorer file `name` (memory/ranking/), by default the one
    ORMAH_BENCH_SCORER names (neither: leave the default), whisper's recall calls included (its pin,
    memory.ranking.scorer.PINNED, follows). Bench only: recall and the thresholds call `load_scorer()` without a
    name, so the default it falls back to is what changes; the package's WEIGHTS_FILE stays.
    bench.stores_recall's stores and bench.whisper_stores (through bench.whisper_quality.setup_django) call it."""
    name = name or os.environ.get("ORMAH_BENCH_SCORER")
    if not name:
        return
    from memory.ranking import scorer

    scorer.load_scorer(name)  # fails here, not mid-run, when the file is missing or names unknown features
    scorer._default[0] = name
    scorer.PINNED.update(dict.fromkeys(scorer.PINNED, name))


def use_store(home: Path, database: str | None = None) -> None:
    """Point the services and the index connection at one store's home (migrating a new one); on PostgreSQL the
    index is the server's database `database` instead of the home's file."""
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections

    home.mkdir(parents=True, exist_ok=True)
    connections["default"].close()
    connections["default"].settings_dict["NAME"] = database or str(home / "index.sqlite3")
    ormah = dict(settings.ORMAH)
    ormah.update(HOME=home, MEMORY_DIR=home / "memory", TOKEN_FILE=home / "api_token")
    settings.ORMAH = ormah
    call_command("migrate", verbosity=0, interactive=False)


def model_slug(model_id: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model_id)


def build_store(conv: Conversation, home: Path, database: str | None = None) -> dict[str, int]:
    """The store of one conversation (built once, then reused): dia_id -> index row id."""
    marker = home / "built.json"
    if marker.is_file():
        use_store(home, database)
        return json.loads(marker.read_text())
    use_store(home, database)
    from memory.domain.requests import NodeCreate
    from memory.models import NodeRow
    from memory.services import nodes_remember

    started = time.perf_counter()
    items = [(NodeCreate(content=t.text, created=t.created, source="bench:locomo"), None) for t in conv.turns]
    results = nodes_remember(items=items, auto_link=False)
    uids = {r.node.id: t.dia_id for r, t in zip(results, conv.turns)}
    rows = dict(NodeRow.objects.filter(uid__in=list(uids)).values_list("uid", "id"))
    keymap = {uids[uid]: row_id for uid, row_id in rows.items()}
    marker.write_text(json.dumps(keymap))
    print(f"  built {conv.sample_id}: {len(keymap)} turns in {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return keymap


class CachedQueries:
    """The configured embedder with query vectors kept in a file (documents go straight to the model)."""

    def __init__(self, inner, path: Path) -> None:
        import numpy as np

        self.inner, self.path, self.model_id, self.dim = inner, path, inner.model_id, inner.dim
        self._np = np
        self.cache: dict[str, list[float]] = json.loads(path.read_text()) if path.is_file() else {}
        self.dirty = False
        self.embed_seconds: list[float] = []

    def embed_documents(self, texts):
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str):
        if text not in self.cache:
            started = time.perf_counter()
            vec = self.inner.embed_query(text)
            self.embed_seconds.append(time.perf_counter() - started)
            self.cache[text] = [float(x) for x in vec]
            self.dirty = True
        return self._np.asarray(self.cache[text], dtype=self._np.float32)

    def save(self) -> None:
        if self.dirty:
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(self.cache))
            os.replace(tmp, self.path)
            self.dirty = False
