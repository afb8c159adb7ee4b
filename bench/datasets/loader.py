"""Load the labelled stores of bench/datasets/ (README.md there): memories, edges and queries with their split.

Django-free, so the fitting script, the recall harness, the whisper bench and the checker can all use it. The
`docs` store holds no text of its own: each memory names a file inside an installed distribution (the long
description in its METADATA, or a markdown file it ships), and `load_store` reads that text at run time.
"""

from __future__ import annotations

import email
import json
from dataclasses import dataclass
from datetime import datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bench.recall.harness import Dataset

HERE = Path(__file__).resolve().parent
# Stores written but sealed for a later session's first run (issue 11): the checker validates them, no bench loads
# them. `home` (Noor's house and its attic conversion) was written in session 24 and sealed until session 25's lead
# emptied this set, in the same commit as SEALED_BATCHES (batches 1-15 were re-run over five stores before it).
# `course` (her autumn 2026 Dutch Sign Language course) was written in session 25 and sealed until session 26's lead
# emptied this set with batch 17 (batches 1-16 were re-run over five stores before it). `choir` (her amateur choir
# since January 2026) was written in session 26 and sealed until session 27's lead emptied this set with batch 18
# (batches 1-17 were re-run over six stores before it). `allotment` (her allotment garden since March 2026) was
# written in session 27, sealed until session 28's lead opens it with batch 19.
SEALED_STORES: frozenset[str] = frozenset({"allotment"})
ALL_STORES = ("docs", "lifelog", "devprojects", "club", "home", "course", "choir", "allotment")
# The stores a bench may run: every written store that is not sealed.
STORES = tuple(name for name in ALL_STORES if name not in SEALED_STORES)
NO_ANSWER = "offtopic"


class DatasetUnavailable(RuntimeError):
    """A store cannot be built here (for the docs store: a distribution it reads from is not installed)."""


class SealedStore(ValueError):
    """A bench asked for a sealed store (SEALED_STORES): only the checker reads it, through raw_store."""

    def __init__(self, name: str) -> None:
        super().__init__(f"store {name!r} is sealed until a later session's first run (loader.SEALED_STORES); "
                         "no bench may load it")


@dataclass(frozen=True)
class LabelledQuery:
    """One labelled query. `relevant` is empty for off-topic queries (the right answer is nothing);
    `accept` lists memories that are not the answer but are fine to return (for whisper precision)."""

    id: str
    text: str
    category: str
    relevant: tuple[str, ...]
    accept: tuple[str, ...]
    space: str | None
    split: str
    anchor: str | None = None
    note: str | None = None

    @property
    def answerable(self) -> bool:
        return bool(self.relevant)


@dataclass(frozen=True)
class Store:
    """A labelled store: memories as plain dicts in the format of bench/recall/dataset.json (content resolved),
    edges, queries, the fixed clock and the seed the split was drawn with."""

    name: str
    description: str
    now: datetime
    self_name: str
    seed: int
    memories: tuple[dict, ...]
    edges: tuple[dict, ...]
    queries: tuple[LabelledQuery, ...]

    def queries_in(self, split: str | None) -> tuple[LabelledQuery, ...]:
        """The queries of one split ("dev" or "test"), or all of them for None."""
        return self.queries if split is None else tuple(q for q in self.queries if q.split == split)


def _time(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def store_path(name: str) -> Path:
    if name not in ALL_STORES:
        raise ValueError(f"unknown store {name!r} (known: {', '.join(ALL_STORES)})")
    return HERE / f"{name}.json"


def raw_store(name: str) -> dict:
    """The store's JSON as written (docs memories without content); sealed stores too, for the checker."""
    return json.loads(store_path(name).read_text(encoding="utf-8"))


def _distribution(name: str) -> metadata.Distribution:
    try:
        return metadata.distribution(name)
    except metadata.PackageNotFoundError:
        raise DatasetUnavailable(f"the docs store reads {name!r} from the installed packages, and it is not "
                                 "installed in this environment") from None


def doc_text(source: dict) -> str:
    """The markdown a docs memory points at, read from the installed distribution."""
    dist = _distribution(source["dist"])
    if source.get("part") == "description":
        raw = dist.read_text("METADATA") or ""
        body = email.message_from_string(raw).get_payload()
        text = body if isinstance(body, str) else ""
    else:
        path = Path(str(dist.locate_file(source["file"])))
        if not path.is_file():
            raise DatasetUnavailable(f"{source['dist']} is installed but has no {source['file']}")
        text = path.read_text(encoding="utf-8")
    if not text.strip():
        raise DatasetUnavailable(f"{source['dist']}: the document is empty in the installed version")
    return text.strip() + "\n"


def installed_license(dist_name: str) -> str:
    """The licence an installed distribution declares (License-Expression, License, or its classifier)."""
    dist = _distribution(dist_name)
    meta = dist.metadata
    for key in ("License-Expression", "License"):
        value = (meta.get(key) or "").strip()
        if value and "\n" not in value and len(value) < 60:
            return value
    classifiers = [c for c in (meta.get_all("Classifier") or []) if c.startswith("License ::")]
    if classifiers:
        return classifiers[0].rsplit("::", 1)[1].strip()
    package_json = Path(str(dist.locate_file(f"{dist_name}/driver/package/package.json")))
    if package_json.is_file():
        return json.loads(package_json.read_text()).get("license", "")
    return ""


def _memory(m: dict) -> dict:
    out = dict(m)
    if "source" in m:
        out["content"] = doc_text(m["source"])
    return out


def load_store(name: str) -> Store:
    """A store with every memory's content resolved (raises DatasetUnavailable when it cannot be, SealedStore for a
    sealed store)."""
    if name in SEALED_STORES:
        raise SealedStore(name)
    data = raw_store(name)
    queries = tuple(
        LabelledQuery(id=q["id"], text=q["query"], category=q["category"], relevant=tuple(q["relevant"]),
                      accept=tuple(q.get("accept", ())), space=q.get("space"), split=q["split"],
                      anchor=q.get("anchor"), note=q.get("note"))
        for q in data["queries"]
    )
    return Store(name=data["name"], description=data["description"], now=_time(data["now"]),
                 self_name=data["self"]["name"], seed=data["split_seed"],
                 memories=tuple(_memory(m) for m in data["memories"]), edges=tuple(data["edges"]),
                 queries=queries)


def load_stores(names: tuple[str, ...] = STORES) -> dict[str, Store]:
    return {name: load_store(name) for name in names}


def to_recall_dataset(store: Store, split: str | None = None) -> Dataset:
    """The store as a bench/recall harness Dataset (seed, rank_all and score work on it), with the answerable
    queries of `split`. Off-topic queries have no relevant memory, so recall@k does not apply to them; read them
    from `store.queries_in(split)` for no-good-match and calibration checks."""
    from bench.recall.harness import Dataset, Query

    queries = tuple(Query(q.id, q.text, q.category, q.relevant, q.space)
                    for q in store.queries_in(split) if q.answerable)
    return Dataset(now=store.now, self_name=store.self_name, memories=store.memories, edges=store.edges,
                   queries=queries)


# Labelling rounds nobody has run yet: every bench leaves them out (prompts_in) until the lead's first run of them,
# made after emptying this set in the session that measures them (issue 11: a batch's test half is only honest while
# it is unseen). Batch 10 was written in session 18 and unsealed by session 19's lead for its first run; batch 11 was
# written in session 19 and unsealed by session 20's lead for its first run; batch 12 was written in session 20 and
# unsealed by session 21's lead for its first run; batch 13 was written in session 21 and unsealed by session 22's
# lead for its first run; batch 14 was written in session 22 and unsealed by session 23's lead for its first run;
# batch 15 was written in session 23 and unsealed by session 24's lead for its first run. Batch 16 was written in
# session 24, mostly over the then sealed `home` store, and unsealed with it by session 25's lead for its first run.
# Batch 17 was written in session 25, mostly over the then sealed `course` store, and unsealed with it by session
# 26's lead for its first run. Batch 18 was written in session 26, mostly over the then sealed `choir` store, and
# unsealed with it by session 27's lead for its first run. Batch 19 was written in session 27, mostly over the sealed
# `allotment` store: session 28's lead unseals both together.
SEALED_BATCHES: frozenset[int] = frozenset({19})


@dataclass(frozen=True)
class WhisperSet:
    """The whisper scenarios (whisper.json): prompts as dicts (id, kind, category, space, prompt, expect, accept,
    history, split) over the memories of `stores` loaded into one home."""

    now: datetime
    stores: tuple[str, ...]  # the runnable ones: a sealed store whisper.json names is left out
    seed: int
    prompts: tuple[dict, ...]

    def prompts_in(self, split: str | None) -> tuple[dict, ...]:
        """The prompts of a split (None: both) that a bench may run: sealed batches left out (SEALED_BATCHES)."""
        return tuple(p for p in self.prompts
                     if split in (None, p["split"]) and p.get("batch", 1) not in SEALED_BATCHES)


def raw_whisper() -> dict:
    return json.loads((HERE / "whisper.json").read_text(encoding="utf-8"))


def load_whisper() -> WhisperSet:
    data = raw_whisper()
    return WhisperSet(now=_time(data["now"]), stores=tuple(s for s in data["stores"] if s not in SEALED_STORES),
                      seed=data["split_seed"], prompts=tuple(data["prompts"]))


def merged_memories(stores: tuple[str, ...] = STORES) -> tuple[tuple[dict, ...], tuple[dict, ...]]:
    """(memories, edges) of several stores for one home; keys are unique across stores (d, l, p, c, h, g, k, t
    prefixes). A sealed store raises SealedStore."""
    loaded = [load_store(name) for name in stores]
    memories = tuple(m for s in loaded for m in s.memories)
    keys = [m["key"] for m in memories]
    if len(keys) != len(set(keys)):
        raise ValueError("memory keys collide across stores")
    return memories, tuple(e for s in loaded for e in s.edges)
